// Runs one scenario of issue 7 against the gateway with the real `ws` client, `runs` times, and
// prints one JSON line: {"codes": {"1008": 100}, "failures": [...]}. A run fails when the close
// code is not the expected one (1006 is what a reset gives) or the socket reported an error.
//
//   node close-codes.mjs ws://127.0.0.1:PORT/socket flood|fragments|refused|idle RUNS
import WebSocket from 'ws';

const [url, scenario, runsArg] = process.argv.slice(2);
const runs = Number(runsArg);

// Sends like a client that does not care: a batch per event-loop turn until the socket closes,
// so it is still sending when the close frame arrives.
function keepSending(ws, sendOne, total) {
  let sent = 0;
  const turn = () => {
    for (let i = 0; i < 512 && sent < total; i++, sent++) {
      if (ws.readyState !== WebSocket.OPEN) return;
      sendOne(sent, total);
    }
    if (sent < total && ws.readyState === WebSocket.OPEN) setImmediate(turn);
  };
  turn();
}

const senders = {
  flood: (ws) => keepSending(ws, (i) => ws.send('message ' + i), 400),
  // 1 MiB as 1-byte fragments: the gateway caps a message at 1,024 fragments.
  fragments: (ws) => keepSending(ws, (i, n) => ws.send('x', { fin: i === n - 1 }), 1 << 20),
  refused: (ws) => keepSending(ws, (i) => ws.send('early ' + i), 200),
  idle: () => {},
};

function once(send) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    let error = null;
    ws.on('open', () => send(ws));
    ws.on('message', () => {});
    ws.on('error', (e) => { error = error || String(e.code || e.message); });
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString(), error }));
  });
}

const send = senders[scenario];
if (!send || !(runs > 0)) {
  console.error('usage: node close-codes.mjs URL flood|fragments|refused|idle RUNS');
  process.exit(2);
}
const results = [];
if (scenario === 'idle') {
  // Idle clients wait out the timeout together.
  results.push(...await Promise.all(Array.from({ length: runs }, () => once(send))));
} else {
  for (let i = 0; i < runs; i++) results.push(await once(send));
}
const codes = {};
const failures = [];
for (const r of results) {
  codes[r.code] = (codes[r.code] || 0) + 1;
  if (r.error) failures.push(r);
}
console.log(JSON.stringify({ codes, failures: failures.slice(0, 5), failed: failures.length }));
