-- Capacity 1: hold a random resource for 1-5 nights for 1 s. A lapsed use overlapping the
-- span is deleted first (it no longer counts), then the insert, which the exclusion
-- constraint turns into nothing when a live use overlaps (ON CONFLICT DO NOTHING: no error).
\set r random(0, 4999)
\set d random(1, 300)
\set n random(1, 5)
\set e :d + :n
\set u random(1, 1000000)
BEGIN;
DELETE FROM cal_uses
 WHERE resource = :r AND span && daterange(current_date + :d::integer, current_date + :e::integer)
   AND expires_at <= now();
INSERT INTO cal_uses (resource, span, user_id, expires_at)
VALUES (:r, daterange(current_date + :d::integer, current_date + :e::integer), 'u' || :u, now() + interval '1 second')
ON CONFLICT DO NOTHING;
COMMIT;
