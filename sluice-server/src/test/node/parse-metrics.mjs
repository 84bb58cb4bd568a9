// Parses Prometheus text from stdin with parse-prometheus-text-format (its sample parser is
// ported from the Prometheus Python client's) and prints the families as JSON.
import parse from 'parse-prometheus-text-format';

let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { text += chunk; });
process.stdin.on('end', () => { process.stdout.write(JSON.stringify(parse(text))); });
