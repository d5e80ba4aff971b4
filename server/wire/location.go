package wire

import (
	"net/http"
	"net/url"
)

// SetLocation sets the Location of a record created under collection (a
// path ending in "/") with id: id escaped as one path segment, and the
// segments "." and ".." (valid externalUserIds and level names) as
// "%2E" and "%2E%2E", which a client resolving the reference would
// otherwise remove (RFC 3986 §5.2.4) and land on the list or above it.
func SetLocation(w http.ResponseWriter, collection, id string) {
	seg := url.PathEscape(id)
	switch seg {
	case ".":
		seg = "%2E"
	case "..":
		seg = "%2E%2E"
	}
	w.Header().Set("Location", collection+seg)
}
