/** The value of one series on a service's /metrics, named with its labels as exposed (0 when absent). */
export async function metricValue(serviceUrl: string, series: string): Promise<number> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
