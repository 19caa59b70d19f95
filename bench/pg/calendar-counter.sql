-- Capacity 10: hold 1 of a random resource for 1-5 nights for 1 s, in one transaction: the
-- resource's lapsed holds give their nights back, then every night of the span is taken
-- WHERE free >= 1, and the hold's row is written only when all of them were (else ROLLBACK).
\set r random(0, 4999)
\set d random(1, 300)
\set n random(1, 5)
\set e :d + :n
\set u random(1, 1000000)
BEGIN;
WITH lapsed AS (
    DELETE FROM cal_holds WHERE resource = :r AND expires_at <= now() RETURNING span, quantity
), back AS (
    SELECT night::date AS night, sum(quantity) AS quantity
      FROM lapsed, generate_series(lower(span), upper(span) - 1, interval '1 day') AS night
     GROUP BY 1
)
UPDATE cal_nights SET free = free + back.quantity
  FROM back WHERE cal_nights.resource = :r AND cal_nights.night = back.night;
WITH taken AS (
    UPDATE cal_nights SET free = free - 1
     WHERE resource = :r AND night >= current_date + :d::integer AND night < current_date + :e::integer
       AND free >= 1
    RETURNING night
)
SELECT count(*) AS taken FROM taken \gset
\if :taken = :n
INSERT INTO cal_holds (resource, span, quantity, user_id, expires_at)
VALUES (:r, daterange(current_date + :d::integer, current_date + :e::integer), 1, 'u' || :u, now() + interval '1 second');
COMMIT;
\else
ROLLBACK;
\endif
