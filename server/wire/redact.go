package wire

import "strings"

// RedactPath hides the bearer credentials in hosted-UI paths, for logs: the
// session token of /sdk/{token} and the short code of /l/{code} (SPEC §3.4:
// neither ever appears in a log line). It goes by segments, not by a
// prefix, so that a path that only looks like a route — //sdk/T, /sdk//T,
// /L/S — is redacted too: after a first segment named sdk or l, in any
// case, the next non-empty segment is the credential. After such a segment
// further in (a base URL's prefix, /prefix/sdk/T), so is a next segment as
// long as a credential (16 characters and more: tokens and codes have 22
// and more), which keeps the page API's names (/api/v1/sdk/state).
func RedactPath(p string) string {
	if !hasCredentialSegment(p) {
		return p // nearly every path: no allocation
	}
	segs := strings.Split(p, "/")
	first := true // no non-empty segment before i
	for i := 0; i < len(segs); i++ {
		if segs[i] == "" {
			continue
		}
		atStart := first
		first = false
		name := "{token}"
		switch {
		case strings.EqualFold(segs[i], "sdk"):
		case strings.EqualFold(segs[i], "l"):
			name = "{code}"
		default:
			continue
		}
		j := i + 1
		for j < len(segs)-1 && segs[j] == "" {
			j++
		}
		if j < len(segs) && (atStart || len(segs[j]) >= minCredential) {
			segs[j] = name
		}
		// A dot or blank segment between the name and the credential
		// (/sdk/./T, /l/%2e/C, /sdk/T/../T) must not carry it into the
		// log: every later segment as long as a credential goes too.
		for k := j + 1; k < len(segs); k++ {
			if len(segs[k]) >= minCredential {
				segs[k] = name
			}
		}
		break
	}
	return strings.Join(segs, "/")
}

// minCredential is the length from which a path segment after sdk or l,
// not at the path's start, is taken for a credential.
const minCredential = 16

// hasCredentialSegment reports whether p has a segment named sdk or l, in
// any case.
func hasCredentialSegment(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		seg := p[i+1:]
		if k := strings.IndexByte(seg, '/'); k >= 0 {
			seg = seg[:k]
		}
		if strings.EqualFold(seg, "sdk") || strings.EqualFold(seg, "l") {
			return true
		}
	}
	return false
}
