-- Issue 3's form: INSERT ... ON CONFLICT DO NOTHING; nothing ever frees a seat again.
\set s random(1, 60000)
\set u random(1, 1000000)
INSERT INTO reservations (seat_id, user_id, expires_at)
VALUES (:s, 'u' || :u, now() + interval '600 seconds')
ON CONFLICT (seat_id) DO NOTHING;
