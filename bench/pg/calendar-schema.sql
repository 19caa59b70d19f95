-- The calendar peers of part `calendar` (bench/run.sh): what users of PostgreSQL do today to
-- sell time, over the spans loadgen's calendar-hold asks Holdfast for (1 to 5 nights starting
-- 1 to 300 days ahead), each half of the 10,000 resources on its own table.
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- Capacity 1 (a room, a car): one row per use, and the exclusion constraint refuses a second
-- use of the same resource over an overlapping span.
CREATE TABLE cal_uses (
    resource integer NOT NULL,
    span daterange NOT NULL,
    user_id text NOT NULL,
    expires_at timestamptz NOT NULL,
    EXCLUDE USING gist (resource WITH =, span WITH &&)
);

-- Capacity 10 (a room type): a counter row per resource and night, taken WHERE free >= q in
-- one transaction with the hold's own row, which gives its nights back once it has lapsed.
CREATE TABLE cal_nights (
    resource integer NOT NULL,
    night date NOT NULL,
    free integer NOT NULL CHECK (free >= 0),
    PRIMARY KEY (resource, night)
);
INSERT INTO cal_nights (resource, night, free)
SELECT r, current_date + d, 10 FROM generate_series(0, 4999) AS r, generate_series(0, 310) AS d;
CREATE TABLE cal_holds (
    id bigserial PRIMARY KEY,
    resource integer NOT NULL,
    span daterange NOT NULL,
    quantity integer NOT NULL,
    user_id text NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX cal_holds_lapse ON cal_holds (resource, expires_at);
VACUUM ANALYZE;
