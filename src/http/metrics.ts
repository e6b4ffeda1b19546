/** A small Prometheus text-format registry: request counts and latency histograms per route (D-7). */

const BUCKETS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

interface Series {
  count: number;
  sumMs: number;
  buckets: number[];
}

const requests = new Map<string, number>();
const durations = new Map<string, Series>();
const gauges = new Map<string, () => number>();

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** One route's counters: the count per status, and its latency histogram. */
interface RouteSeries {
  labels: string;
  statuses: Map<number, string>;
  duration: Series;
}

// Label strings are built once per method and route (and status), not per request.
const routeSeries = new Map<string, RouteSeries>();

function seriesOf(method: string, route: string): RouteSeries {
  const id = `${method} ${route}`;
  let series = routeSeries.get(id);
  if (!series) {
    const labels = `method="${escapeLabel(method)}",route="${escapeLabel(route)}"`;
    let duration = durations.get(labels);
    if (!duration) {
      duration = { count: 0, sumMs: 0, buckets: BUCKETS.map(() => 0) };
      durations.set(labels, duration);
    }
    series = { labels, statuses: new Map(), duration };
    routeSeries.set(id, series);
  }
  return series;
}

export function recordHttpRequest(method: string, route: string, status: number, ms: number): void {
  const series = seriesOf(method, route);
  let key = series.statuses.get(status);
  if (key === undefined) {
    key = `${series.labels},status="${status}"`;
    series.statuses.set(status, key);
  }
  requests.set(key, (requests.get(key) ?? 0) + 1);
  const duration = series.duration;
  duration.count += 1;
  duration.sumMs += ms;
  for (let i = 0; i < BUCKETS.length; i++) if (ms <= BUCKETS[i]!) duration.buckets[i]! += 1;
}

/** Registers a gauge read at scrape time (e.g. pool sizes). */
export function registerGauge(name: string, read: () => number): void {
  gauges.set(name, read);
}

export function renderMetrics(): string {
  const lines: string[] = [];
  lines.push('# HELP http_requests_total HTTP requests answered.', '# TYPE http_requests_total counter');
  for (const [labels, n] of requests) lines.push(`http_requests_total{${labels}} ${n}`);
  lines.push(
    '# HELP http_request_duration_seconds HTTP request latency.',
    '# TYPE http_request_duration_seconds histogram',
  );
  for (const [labels, s] of durations) {
    for (const [i, b] of BUCKETS.entries())
      lines.push(`http_request_duration_seconds_bucket{${labels},le="${b / 1000}"} ${s.buckets[i]}`);
    lines.push(`http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`);
    lines.push(`http_request_duration_seconds_sum{${labels}} ${s.sumMs / 1000}`);
    lines.push(`http_request_duration_seconds_count{${labels}} ${s.count}`);
  }
  const memory = process.memoryUsage();
  lines.push('# TYPE process_resident_memory_bytes gauge', `process_resident_memory_bytes ${memory.rss}`);
  lines.push('# TYPE nodejs_heap_used_bytes gauge', `nodejs_heap_used_bytes ${memory.heapUsed}`);
  lines.push('# TYPE process_uptime_seconds gauge', `process_uptime_seconds ${process.uptime()}`);
  for (const [name, read] of gauges) lines.push(`# TYPE ${name} gauge`, `${name} ${read()}`);
  return `${lines.join('\n')}\n`;
}
