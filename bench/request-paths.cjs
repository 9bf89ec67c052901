/**
 * autocannon `setupRequest` for load run in a worker thread (functions cannot be passed to one):
 * each request takes the next path of BENCH_REQUEST_PATHS (a JSON array), round robin.
 */
'use strict';
const paths = JSON.parse(process.env.BENCH_REQUEST_PATHS || '["/"]');
let n = 0;
module.exports = (req) => ({ ...req, path: paths[n++ % paths.length] });
