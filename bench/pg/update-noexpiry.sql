-- Issue 3's form: an atomic UPDATE of an available seat; nothing ever frees it again.
\set s random(1, 60000)
\set u random(1, 1000000)
UPDATE seats SET status = 'held', user_id = 'u' || :u WHERE id = :s AND status = 'available';
