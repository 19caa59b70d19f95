-- wrk script: random single-seat holds by random users on the 60,000-seat event "bench"
-- (60 rows of 1,000 seats in section S, created by bench/hold-random.sh).
-- Each hold has a short ttl so seats keep coming back; the report counts answers by status.
local counter = 0
local threads = {}

function setup(thread)
    thread:set("id", counter)
    table.insert(threads, thread)
    counter = counter + 1
end

function init(args)
    math.randomseed(os.time() * 1000 + id)
    statuses = {}
    ttl = args[1] or "1"
end

function request()
    local row = math.random(0, 59)
    local seat = math.random(1, 1000)
    local user = math.random(1, 1000000)
    local body = string.format('{"user_id":"u%d","seats":["S-R%d-%d"],"ttl_s":%s}', user, row, seat, ttl)
    return wrk.format("POST", "/v1/events/bench/holds", {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
    local totals = {}
    for _, thread in ipairs(threads) do
        local counts = thread:get("statuses")
        for status, count in pairs(counts) do
            totals[status] = (totals[status] or 0) + count
        end
    end
    local seconds = summary.duration / 1e6
    for status, count in pairs(totals) do
        io.write(string.format("status %d: %d (%.0f/s)\n", status, count, count / seconds))
    end
    io.write(string.format("latency p50 %.2f ms, p99 %.2f ms\n",
        latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
