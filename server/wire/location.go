package wire

import (
	"net/http"
	"net/url"
)

// PathSegment escapes id as one path segment, and the segments "." and
// ".." (valid externalUserIds and level names) as "%2E" and "%2E%2E",
// which a client resolving a reference would otherwise remove (RFC 3986
// §5.2.4), landing on the list or above it.
func PathSegment(id string) string {
	switch seg := url.PathEscape(id); seg {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	default:
		return seg
	}
}

// SetLocation sets the Location of a record created under collection (a
// path ending in "/") with id, id escaped by PathSegment.
func SetLocation(w http.ResponseWriter, collection, id string) {
	w.Header().Set("Location", collection+PathSegment(id))
}
