// scenario.mts: the partner scenario through a client generated from
// /openapi.json by openapi-typescript and openapi-fetch, unedited.
// Env: COMPLYBOX_URL, COMPLYBOX_KEY, COMPLYBOX_SECRET, COMPLYBOX_IMAGES.
import createClient from "openapi-fetch";
import { readFileSync } from "node:fs";
import type { paths } from "./schema.js";

const env = (k: string): string => process.env[k] ?? (() => { throw new Error(`set ${k}`); })();
const api = createClient<paths>({ baseUrl: env("COMPLYBOX_URL"), headers: { "X-Api-Key": env("COMPLYBOX_KEY"), "X-Api-Secret": env("COMPLYBOX_SECRET") } });
const image = (name: string) => readFileSync(`${env("COMPLYBOX_IMAGES")}/${name}`).toString("base64");
function must<T>(r: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (r.data === undefined) throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
  console.log(`${what}: ${r.response.status}`);
  return r.data;
}
const id = { params: { path: { id: "ts-1" } } };
const a = must(await api.POST("/v1/applicants", { body: { externalUserId: "ts-1", firstName: "Ada", lastName: "Lovelace", dateOfBirth: "1990-04-01" } }), "create applicant");
must(await api.POST("/v1/applicants/{id}/verification-sessions", { ...id, body: {} }), "create session");
must(await api.POST("/v1/applicants/{id}/verify", { ...id, body: { idDocType: "PASSPORT", country: "DEU", documentFront: image("front.png"), selfie: image("selfie.jpg") } }), "verify");
const st = must(await api.GET("/v1/applicants/{id}/status", id), "status");
// Objects of data (review-history details, questionnaire answers) are open
// maps in the generated types, not Record<string, never>.
const h = must(await api.GET("/v1/applicants/{id}/review-history", id), "review history");
const actions = h.items.map((e) => String(e.details?.action ?? e.details?.result ?? "")).filter((x) => x !== "");
console.log(`history details: ${actions.length} with an action or result`);
const q = { params: { path: { id: "ts-q" } } };
must(await api.POST("/v1/applicants", { body: { externalUserId: "ts-q", verificationLevelName: "full-kyc-level", lastName: "Lovelace", dateOfBirth: "1990-04-01" } }), "create applicant on full-kyc-level");
must(await api.POST("/v1/applicants/{id}/verify", { ...q, body: { idDocType: "PASSPORT", country: "DEU", documentFront: image("front.png"), selfie: image("selfie.jpg"), questionnaire: { pep: false, sourceOfFunds: "salary" } } }), "verify with questionnaire answers");
console.log(`status: ${JSON.stringify(st).slice(0, 80)}`);
const v = must(await api.POST("/vaults", { body: { name: "ts vault", externalId: "ts-vault" } }), "create vault");
const w = must(await api.POST("/vaults/{id}/wallets", { params: { path: { id: v.vaultId } }, body: { assetSymbol: "ETH", label: "ts wallet" } }), "create wallet");
const d = must(await api.POST("/sandbox/deposits", { body: { walletId: w.walletId, amount: "1.5" } }), "deposit");
const b = must(await api.GET("/wallets/{id}/balance", { params: { path: { id: w.walletId } } }), "balance");
console.log(`deposit ${d.transactionId} ${d.status}; balance total ${b.total} pending ${b.pending}`);
if (!a.lockedFields.includes("dateOfBirth")) throw new Error(`dateOfBirth not locked: ${a.lockedFields}`);
const cleared = must(await api.PATCH("/v1/applicants/{id}", { ...id, body: { dateOfBirth: null } }), "clear dateOfBirth");
if (cleared.lockedFields.includes("dateOfBirth") || cleared.info?.dateOfBirth != null) throw new Error(`dateOfBirth still set: ${JSON.stringify(cleared)}`);
console.log("ok");
