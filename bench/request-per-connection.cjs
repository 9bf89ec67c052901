/**
 * autocannon `setupClient` for load run in a worker thread (functions cannot be passed to one):
 * each new connection takes the next request of BENCH_CONNECTION_REQUESTS (a JSON array of
 * `{ method, path, headers, body }`, round robin) and sends it, as it is, for the whole run.
 * So each connection is one caller with its own trail, as a CI job is.
 */
'use strict';
const requests = JSON.parse(process.env.BENCH_CONNECTION_REQUESTS || '[]');
let n = 0;
module.exports = (client) => {
  const r = requests[n++ % requests.length];
  client.setRequests([{ method: r.method, path: r.path, headers: r.headers, body: r.body }]);
};
