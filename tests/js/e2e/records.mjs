// Deterministic records for end-to-end tests: keys (some null), values (some tombstones, some
// binary with zero bytes, some unicode), 0-3 headers with a repeated name.
// `headers` is kafkajs's form (an object; a repeated name holds an array, order kept);
// `headerList` is the order they travel on the wire: by name in insertion order, then values.
export function makeRecord(i) {
  const key = i % 50 === 7 ? null : Buffer.from(`key-${i % 1000}`);
  let value;
  if (i % 97 === 3) value = null;
  else if (i % 13 === 0) value = Buffer.from([0, 1, 2, 0, 255, i & 255, 0]);
  else value = Buffer.from(`{"n":${i},"city":"${['zürich', '東京', 'lagos'][i % 3]}","pad":"${'x'.repeat(i % 40)}"}`);
  const headers = {};
  const n = i % 4;
  if (n >= 1) headers.source = [Buffer.from(`s0-${i}`)];
  if (n >= 2) headers.trace = [Buffer.from(`t1-${i}`)];
  if (n >= 3) headers.source.push(Buffer.from(`s2-${i}`));
  const headerList = [];
  for (const [name, vs] of Object.entries(headers)) for (const v of vs) headerList.push([name, v]);
  return { key, value, headers, headerList };
}
