// verify.js checks one webhook delivery with the official Standard Webhooks
// library (npm "standardwebhooks"), as a partner's receiver would.
// Usage: node verify.js SECRET HEADERS.json BODY
// Exit 0 and the parsed payload on stdout when it verifies; exit 1 otherwise.
const { Webhook } = require("standardwebhooks");
const fs = require("node:fs");

const [secret, headersFile, bodyFile] = process.argv.slice(2);
const headers = JSON.parse(fs.readFileSync(headersFile, "utf8"));
const body = fs.readFileSync(bodyFile, "utf8");
try {
  const payload = new Webhook(secret).verify(body, headers);
  process.stdout.write(JSON.stringify(payload));
} catch (err) {
  process.stderr.write(`verification failed: ${err.message}\n`);
  process.exit(1);
}
