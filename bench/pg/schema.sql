-- The two SQL ways to hold a seat that bench/run.sh measures with pgbench: a row per seat
-- updated in place, or a reservation row whose primary key refuses a second holder.
CREATE TABLE seats (
    id integer PRIMARY KEY,
    status text NOT NULL DEFAULT 'available',
    user_id text,
    expires_at timestamptz
);
INSERT INTO seats (id) SELECT g FROM generate_series(1, 60000) AS g;
CREATE TABLE reservations (
    seat_id integer PRIMARY KEY,
    user_id text NOT NULL,
    expires_at timestamptz NOT NULL
);
VACUUM ANALYZE;
