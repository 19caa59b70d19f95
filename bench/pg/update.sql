-- Hold a random seat for 1 s with an atomic UPDATE: free, or held by a lapsed hold.
\set s random(1, 60000)
\set u random(1, 1000000)
UPDATE seats SET status = 'held', user_id = 'u' || :u, expires_at = now() + interval '1 second'
 WHERE id = :s AND (status = 'available' OR (status = 'held' AND expires_at <= now()));
