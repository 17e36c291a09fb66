-- wrk reporter: prints machine-readable totals and latency percentiles (wrk's own
-- --latency table has no p95). Latencies are in microseconds.
done = function(summary, latency, requests)
  io.write(string.format("BENCH requests=%d duration_us=%d errors=%d p50_us=%d p95_us=%d p99_us=%d\n",
    summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99)))
end
