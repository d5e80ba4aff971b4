package server

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
)

//go:embed openapi/*.json
var openapiFragments embed.FS

// openapiDocument merges the fragments under openapi/: base.json gives the
// frame; every other file adds its "paths" and "components.schemas".
func openapiDocument(version string) ([]byte, error) {
	var doc map[string]any
	base, err := openapiFragments.ReadFile("openapi/base.json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(base, &doc); err != nil {
		return nil, fmt.Errorf("openapi/base.json: %w", err)
	}
	if info, ok := doc["info"].(map[string]any); ok && version != "" {
		info["version"] = version
	}
	paths := ensureMap(doc, "paths")
	schemas := ensureMap(ensureMap(doc, "components"), "schemas")
	names, err := fs.Glob(openapiFragments, "openapi/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
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
		for k, v := range ensureMap(frag, "paths") {
			paths[k] = v
		}
		for k, v := range ensureMap(ensureMap(frag, "components"), "schemas") {
			schemas[k] = v
		}
		for k, v := range ensureMap(ensureMap(frag, "components"), "securitySchemes") { // the hosted UI's bearer token (sdk.json)
			ensureMap(ensureMap(doc, "components"), "securitySchemes")[k] = v
		}
	}
	return json.Marshal(doc)
}

func ensureMap(m map[string]any, key string) map[string]any {
	v, ok := m[key].(map[string]any)
	if !ok {
		v = map[string]any{}
		m[key] = v
	}
	return v
}
