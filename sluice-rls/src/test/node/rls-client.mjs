// An independent client stack for the Envoy rate limit service (issue 11): @grpc/grpc-js with
// @grpc/proto-loader, loading rls.proto and its imports as extracted from the Envoy API jar.
//   node rls-client.mjs PROTO_DIR HOST:PORT DOMAIN KEY VALUE COUNT [HITS]
// Sends COUNT ShouldRateLimit requests one after another (each with hits_addend HITS, default
// 0 = one hit) and prints one JSON line: [{code, remaining, limit, unit, headers}, ...].
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import path from 'node:path';

const [protoDir, target, domain, key, value, count, hits] = process.argv.slice(2);
const definition = protoLoader.loadSync(
  path.join(protoDir, 'envoy/service/ratelimit/v3/rls.proto'),
  { includeDirs: [protoDir], keepCase: true, longs: Number, enums: String, defaults: true },
);
const pkg = grpc.loadPackageDefinition(definition);
const Service = pkg.envoy.service.ratelimit.v3.RateLimitService;
const client = new Service(target, grpc.credentials.createInsecure());

function ask() {
  return new Promise((resolve, reject) => {
    client.ShouldRateLimit({
      domain,
      hits_addend: Number(hits || 0),
      descriptors: [{ entries: [{ key, value }] }],
    }, { deadline: Date.now() + 10000 }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

const out = [];
try {
  for (let i = 0; i < Number(count); i++) {
    const r = await ask();
    const s = r.statuses[0];
    out.push({
      code: r.overall_code,
      remaining: s.limit_remaining,
      limit: s.current_limit ? s.current_limit.requests_per_unit : null,
      unit: s.current_limit ? s.current_limit.unit : null,
      headers: r.response_headers_to_add.map((h) => `${h.key}: ${h.value}`),
    });
  }
  // A bad request: the status and its message, as a client in another language sees them.
  try {
    await new Promise((resolve, reject) => {
      client.ShouldRateLimit({ domain: '', descriptors: [] }, (err, res) => (err ? reject(err)
        : resolve(res)));
    });
    out.push({ invalid: 'answered' });
  } catch (err) {
    out.push({ invalid: grpc.status[err.code], details: err.details });
  }
} finally {
  client.close();
}
console.log(JSON.stringify(out));
