-- Hold a random seat for 1 s by inserting its reservation; a lapsed one is taken over.
\set s random(1, 60000)
\set u random(1, 1000000)
INSERT INTO reservations (seat_id, user_id, expires_at)
VALUES (:s, 'u' || :u, now() + interval '1 second')
ON CONFLICT (seat_id) DO UPDATE SET user_id = excluded.user_id, expires_at = excluded.expires_at
 WHERE reservations.expires_at <= now();
