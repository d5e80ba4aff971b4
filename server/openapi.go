package server

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed openapi/*.json
var openapiFragments embed.FS

// openapiDocument builds the partner OpenAPI document: base.json gives the
// frame; every other fragment under openapi/ adds its "paths", "webhooks"
// and "components"; examples.json adds the examples of each operation by
// operationId. Then the conventions every operation shares (SPEC §2) are
// applied once, here, so that no fragment can forget one: the shared error
// responses, X-Request-Id on every response, Location on the 201s that set
// it, the X-Environment parameter on every API operation and one cursor
// parameter (its meaning) on every list. servers[] is cfg.PublicURL.
func openapiDocument(cfg Config) ([]byte, error) {
	var doc map[string]any
	base, err := openapiFragments.ReadFile("openapi/base.json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(base, &doc); err != nil {
		return nil, fmt.Errorf("openapi/base.json: %w", err)
	}
	if info, ok := doc["info"].(map[string]any); ok && cfg.Version != "" {
		info["version"] = cfg.Version
	}
	if cfg.PublicURL != "" {
		doc["servers"] = []any{map[string]any{"url": strings.TrimRight(cfg.PublicURL, "/"), "description": "This server (public_url)"}}
	}
	names, err := fs.Glob(openapiFragments, "openapi/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var examples map[string]any
	for _, name := range names {
		if name == "openapi/base.json" {
			continue
		}
		b, err := openapiFragments.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var frag map[string]any
		if err := json.Unmarshal(b, &frag); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if name == "openapi/examples.json" {
			examples = frag
			continue
		}
		for _, key := range []string{"paths", "webhooks"} {
			for k, v := range ensureMap(frag, key) {
				ensureMap(doc, key)[k] = v
			}
		}
		for section, entries := range ensureMap(frag, "components") {
			m, _ := entries.(map[string]any)
			for k, v := range m {
				ensureMap(ensureMap(doc, "components"), section)[k] = v
			}
		}
	}
	applyConventions(doc)
	inlineWebhooks(doc)
	if err := applyExamples(doc, examples); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// inlineWebhooks replaces every component reference under the webhooks
// section by a copy of the component, and drops the components that only
// webhooks used: generators such as oapi-codegen keep just the components
// that paths reach, so a webhook that referred to one would name a type
// they never wrote. The fragments still declare each schema and header once.
func inlineWebhooks(doc map[string]any) {
	comps := ensureMap(doc, "components")
	const prefix = "#/components/"
	lookup := func(ref string) (section, name string, v any) {
		rest, ok := strings.CutPrefix(ref, prefix)
		if !ok {
			return "", "", nil
		}
		section, name, _ = strings.Cut(rest, "/")
		m, _ := comps[section].(map[string]any)
		return section, name, m[name]
	}
	used := map[string]bool{} // "section/name" reached from webhooks
	var inline func(v any) any
	inline = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if section, name, target := lookup(ref); target != nil {
					used[section+"/"+name] = true
					return inline(target)
				}
			}
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[k] = inline(x)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = inline(x)
			}
			return out
		}
		return v
	}
	doc["webhooks"] = inline(doc["webhooks"])
	// What paths reach, directly or through other components, stays.
	kept := map[string]bool{}
	var reach func(v any)
	reach = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if section, name, target := lookup(ref); target != nil && !kept[section+"/"+name] {
					kept[section+"/"+name] = true
					reach(target)
				}
			}
			for _, x := range v {
				reach(x)
			}
		case []any:
			for _, x := range v {
				reach(x)
			}
		}
	}
	reach(doc["paths"])
	for key := range used {
		if !kept[key] {
			section, name, _ := strings.Cut(key, "/")
			delete(comps[section].(map[string]any), name)
		}
	}
}

// standardResponses names the shared error responses of SPEC §2 under
// components/responses, by status.
var standardResponses = map[string]string{
	"400": "BadRequest",
	"401": "Unauthorized",
	"403": "Forbidden",
	"404": "NotFound",
	"405": "MethodNotAllowed",
	"409": "Conflict",
	"413": "PayloadTooLarge",
	"429": "TooManyRequests",
	"503": "ServiceUnavailable",
}

// locationOn lists the operations whose 201 carries Location.
var locationOn = map[string]bool{
	"createApplicant": true, "createLevel": true, "createVault": true, "createWallet": true,
	"createTransaction": true, "createSandboxDeposit": true,
}

// idempotentOps lists the creating POSTs that honour Idempotency-Key.
var idempotentOps = map[string]bool{
	"createVault": true, "createWallet": true, "createTransaction": true, "createSandboxDeposit": true,
	"addUbo": true, "createVerificationSession": true,
}

// decodesImages lists the operations that decode uploaded images: with the
// process's decode budget taken they answer 503 decoder_busy with
// Retry-After (SPEC §3.4: concurrent decoding is bounded per process).
var decodesImages = map[string]bool{"verifyApplicant": true, "addDocument": true, "uploadSdkDocuments": true}

// applyConventions declares SPEC §2 on every operation of doc. An
// operation's kind follows from its security: the global API credentials
// (X-Api-Key and X-Api-Secret, hence X-Environment: 400, 401, 403), the
// hosted UI's session token (401), or none (public).
func applyConventions(doc map[string]any) {
	paths := ensureMap(doc, "paths")
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, o := range ops {
			op, ok := o.(map[string]any)
			if !ok || !isMethod(method) {
				continue
			}
			id, _ := op["operationId"].(string)
			sec, hasSec := op["security"].([]any)
			api := !hasSec
			token := hasSec && len(sec) > 0
			params, _ := op["parameters"].([]any)
			kept := params[:0]
			for _, p := range params {
				pm, _ := p.(map[string]any)
				if pm["name"] == "Idempotency-Key" || pm["name"] == "X-Environment" {
					continue // declared once under components
				}
				kept = append(kept, p)
			}
			params = kept
			if api {
				params = append(params, map[string]any{"$ref": "#/components/parameters/XEnvironment"})
			}
			if idempotentOps[id] {
				params = append(params, map[string]any{"$ref": "#/components/parameters/IdempotencyKey"})
			}
			if len(params) > 0 {
				op["parameters"] = params
			}
			responses := ensureMap(op, "responses")
			want := []string{"405"}
			if api {
				want = append(want, "400", "401", "403")
			}
			if token {
				want = append(want, "401")
			}
			if strings.Contains(path, "{") {
				want = append(want, "404")
			}
			// A DELETE reads its body too (empty or any JSON object, as
			// every call that takes none): past the limit it is a 413.
			if op["requestBody"] != nil || method == "post" || method == "put" || method == "patch" || method == "delete" {
				want = append(want, "413")
			}
			if decodesImages[id] {
				want = append(want, "503")
			}
			for _, code := range want {
				if responses[code] == nil {
					responses[code] = map[string]any{}
				}
			}
			for code, r := range responses {
				rm, _ := r.(map[string]any)
				if name, ok := standardResponses[code]; ok {
					ref := map[string]any{"$ref": "#/components/responses/" + name}
					if d, _ := rm["description"].(string); d != "" {
						ref["description"] = d // this operation's reasons, over the shared text
					}
					responses[code] = ref
					continue
				}
				if _, isRef := rm["$ref"]; isRef {
					continue
				}
				headers := ensureMap(rm, "headers")
				headers["X-Request-Id"] = map[string]any{"$ref": "#/components/headers/XRequestId"}
				if code == "201" && locationOn[id] {
					headers["Location"] = map[string]any{"$ref": "#/components/headers/Location"}
				}
			}
		}
	}
}

// applyExamples sets the request and response examples of examples.json,
// {"<operationId>": {"request": …, "<status>": …}}, on their operations:
// as the media type's example, or as its named example "scenario" where
// the fragment gives named examples.
// An example naming no operation is an error, so none can go stale unseen.
func applyExamples(doc, examples map[string]any) error {
	byID := map[string]map[string]any{}
	for _, item := range ensureMap(doc, "paths") {
		ops, _ := item.(map[string]any)
		for method, o := range ops {
			if op, ok := o.(map[string]any); ok && isMethod(method) {
				if id, _ := op["operationId"].(string); id != "" {
					byID[id] = op
				}
			}
		}
	}
	for id, ex := range examples {
		op, ok := byID[id]
		if !ok {
			return fmt.Errorf("openapi/examples.json: no operation %q", id)
		}
		exm, _ := ex.(map[string]any)
		for key, value := range exm {
			var content map[string]any
			if key == "request" {
				rb, _ := op["requestBody"].(map[string]any)
				content, _ = rb["content"].(map[string]any)
			} else {
				r, _ := ensureMap(op, "responses")[key].(map[string]any)
				content, _ = r["content"].(map[string]any)
			}
			mt, _ := content["application/json"].(map[string]any)
			if mt == nil {
				return fmt.Errorf("openapi/examples.json: %s has no JSON %s", id, key)
			}
			if named, ok := mt["examples"].(map[string]any); ok {
				// OpenAPI 3.1: example and examples exclude each other in a
				// media type (kin-openapi refuses both); the fragment's
				// named examples stay, the scenario's joins them.
				named["scenario"] = map[string]any{"summary": "The request of the documented example scenario", "value": value}
				continue
			}
			mt["example"] = value
		}
	}
	return nil
}

func isMethod(m string) bool {
	switch m {
	case "get", "put", "post", "delete", "patch", "head", "options", "trace":
		return true
	}
	return false
}

func ensureMap(m map[string]any, key string) map[string]any {
	v, ok := m[key].(map[string]any)
	if !ok {
		v = map[string]any{}
		m[key] = v
	}
	return v
}
