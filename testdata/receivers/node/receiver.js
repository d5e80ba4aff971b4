// receiver.js: a minimal complybox webhook receiver on Node's http module
// and the Standard Webhooks library (npm "standardwebhooks"): it verifies
// webhook-signature over the raw body (and webhook-timestamp, within 5
// minutes) before parsing, answers 401 on a mismatch, deduplicates on the
// envelope's id (deliveries are at least once) and answers 204 at once,
// handling the event afterwards.
//
//   npm install standardwebhooks@1.1.1
//   WEBHOOK_SECRET=… node receiver.js   # listens on 127.0.0.1:9000; PORT to change
const http = require("node:http");
const { Webhook } = require("standardwebhooks");

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error("set WEBHOOK_SECRET");
const wh = new Webhook(secret); // the signing secret as the API returned it (base64)
const seen = new Set(); // a real receiver keeps this in its database

const server = http.createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let event;
    try {
      event = wh.verify(body, req.headers); // throws on a bad signature or timestamp
    } catch (err) {
      res.writeHead(401).end("bad signature");
      return;
    }
    if (seen.has(event.id)) {
      console.log(`duplicate ${event.id}`);
    } else {
      seen.add(event.id);
      setImmediate(() => console.log(`received ${event.id} ${event.eventType} ${event.entityId}`)); // handle it here
    }
    res.writeHead(204).end();
  });
});
server.listen(Number(process.env.PORT || 9000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
