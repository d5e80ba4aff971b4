package hostedui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagecheck"
)

// The page API: /api/v1/sdk/* with Authorization: Bearer <token>.

// Handler is a page-API handler; token is the session token.
type Handler func(w http.ResponseWriter, r *http.Request, token string) error

// API wraps h, a handler of the page API, with the Bearer token. An unknown, missing or expired token
// is 401 (an expired one with code session_expired).
func (ui *UI) API(h Handler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		token, err := bearerToken(r)
		if err == nil && r.Method != http.MethodGet {
			// The token is checked before the body is read: an unknown or
			// expired token is 401 whatever the body holds.
			_, err = ui.store.SDKView(token)
		}
		if err == nil {
			err = h(w, r, token)
		}
		if err == nil {
			return
		}
		switch e := store.AsError(err); e.Code {
		case store.EGONE, store.EUNAUTHORIZED:
			w.Header().Set("WWW-Authenticate", `Bearer realm="complybox-sdk"`)
			err = &store.Error{Code: store.EUNAUTHORIZED, Reason: e.Reason, Message: e.Message}
		case store.EINTERNAL, store.ERATELIMIT, store.EUNAVAILABLE:
		default:
			// Each call is an sdk history event (SPEC §3.8), a refused
			// one too; its answer stands whether that entry is written.
			// A call shed for load (429, 503) or failed by the server
			// writes nothing more.
			if rerr := ui.store.SDKRefused(token, r.Method+" "+r.URL.Path, err); rerr != nil {
				ui.log.Error("hosted UI: recording a refused call", "err", rerr)
			}
		}
		ui.writeError(w, r, err)
	}
}

// Refuse answers a page-API call that was refused before its handler ran
// (a body over the limit) with err. As API does, it checks the token first,
// so an unknown or expired token is 401, and records the refusal as an sdk
// call (sdk.call_refused).
func (ui *UI) Refuse(w http.ResponseWriter, r *http.Request, err error) {
	ui.API(func(http.ResponseWriter, *http.Request, string) error { return err })(w, r, nil)
}

// bearerToken returns the token of "Authorization: Bearer <token>".
func bearerToken(r *http.Request) (string, error) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", store.Errorf(store.EUNAUTHORIZED, "missing_token", "send the verification session token as Authorization: Bearer <token>")
	}
	return token, nil
}

// sdkShown sets the language and theme of a state to those the hosted UI
// uses: an unknown language is English, a theme other than dark light.
func sdkShown(st *store.SDKState) {
	st.Lang = sdkLang(st.Lang)
	if st.Theme != "dark" {
		st.Theme = "light"
	}
}

// State serves GET /api/v1/sdk/state: the session's applicant, level and
// steps as the page shows them.
func (ui *UI) State(w http.ResponseWriter, r *http.Request, token string) error {
	st, err := ui.store.SDKState(token)
	if err != nil {
		return err
	}
	sdkShown(&st)
	ui.encode(w, http.StatusOK, st)
	return nil
}

// PersonalInfo serves POST /api/v1/sdk/personal-info: the applicant's
// fields (bare, or wrapped in "fields" or "info"); 409 field_locked naming a
// locked field sent with another value, 400 naming a bad one.
func (ui *UI) PersonalInfo(w http.ResponseWriter, r *http.Request, token string) error {
	var in store.ApplicantInput
	if err := wire.Decode(r, &in); err != nil {
		return err
	}
	for _, wrap := range []string{"fields", "info"} {
		inner, ok := in[wrap]
		if !ok || !bytes.HasPrefix(bytes.TrimSpace(inner), []byte("{")) {
			continue
		}
		if len(in) > 1 {
			others := slices.Sorted(maps.Keys(in))
			other := others[0]
			if other == wrap {
				other = others[1]
			}
			return store.Invalid(other, "%s: send the fields either flat or all inside %q, not both", other, wrap)
		}
		// {"fields": {...}} or {"info": {...}} (as the applicant shows
		// them) is read as the fields themselves: its errors name the
		// field as the flat form's do (field_locked "firstName", SPEC
		// §3.8).
		in = nil
		if err := wire.DecodeBytes(inner, &in); err != nil {
			return err
		}
		break
	}
	st, err := ui.store.SDKPersonalInfo(token, in)
	if err != nil {
		return err
	}
	sdkShown(&st)
	ui.encode(w, http.StatusOK, st)
	return nil
}

// Documents serves POST /api/v1/sdk/documents: one multipart upload of a
// step's images (readUpload); 201 with the state.
func (ui *UI) Documents(w http.ResponseWriter, r *http.Request, token string) error {
	up, err := readUpload(r)
	if err != nil {
		return err
	}
	st, err := ui.store.SDKAddDocuments(token, up)
	if err != nil {
		return err
	}
	sdkShown(&st)
	ui.encode(w, http.StatusCreated, st)
	return nil
}

// Questionnaire serves POST /api/v1/sdk/questionnaire: the answers,
// checked against the level's questions.
func (ui *UI) Questionnaire(w http.ResponseWriter, r *http.Request, token string) error {
	var in map[string]json.RawMessage
	if err := wire.Decode(r, &in); err != nil {
		// The body is the answers: an answer given twice, or not UTF-8,
		// is named as every answer error is (questionnaire.<id>).
		return store.Within("questionnaire.", err)
	}
	st, err := ui.store.SDKAnswers(token, in)
	if err != nil {
		return err
	}
	sdkShown(&st)
	ui.encode(w, http.StatusOK, st)
	return nil
}

// AddUbo appends a beneficial-owner row (source sdk) to the session's
// company: 201 with the state, the new row and its index; 200 with the
// row the company already had when the same row is sent again.
func (ui *UI) AddUbo(w http.ResponseWriter, r *http.Request, token string) error {
	var in store.UboInput
	if err := wire.Decode(r, &in); err != nil {
		return err
	}
	out, err := ui.store.SDKAddUbo(token, in)
	if err != nil {
		return err
	}
	sdkShown(&out.SDKState)
	status := http.StatusCreated
	if out.Repeated {
		status = http.StatusOK
	}
	ui.encode(w, status, out)
	return nil
}

// Submit serves POST /api/v1/sdk/submit: sends the applicant to review.
func (ui *UI) Submit(w http.ResponseWriter, r *http.Request, token string) error {
	// It takes no body, as POST …/review: empty or any JSON object.
	if err := wire.Decode(r, &struct{}{}); err != nil {
		return err
	}
	st, err := ui.store.SDKSubmit(token)
	if err != nil {
		return err
	}
	sdkShown(&st)
	ui.encode(w, http.StatusOK, st)
	return nil
}

// readUpload reads a multipart upload: the fields kind (or type), side and
// docType (or idDocType) and the file parts "file" (one or more; "image" or
// any other name with a file name is the same), "front" and "back" (sides
// of an identity document) and "file.<docType>" (a company document of that
// type: the company documents form has one input per required document). An empty file input (no name, no bytes) is
// skipped. A JSON body as POST …/documents takes it (kind, side,
// docType, image in base64) is accepted too. Returns EINVALID naming the
// field (a file over 10 MiB with its size) and ETOOLARGE past the body
// limit.
func readUpload(r *http.Request) (store.SDKUpload, error) {
	var up store.SDKUpload
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mt == "application/json" {
		return readJSONUpload(r)
	}
	if err != nil || mt != "multipart/form-data" {
		return up, store.Invalid("Content-Type", "send the upload as multipart/form-data with the fields kind, side, docType and file")
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return up, store.Invalid("body", "malformed multipart body")
	}
	type filePart struct {
		name, docType string
		data          []byte
		size          int64 // of the whole part; data stops past imagecheck.MaxBytes
	}
	var files []filePart
	count := map[string]int{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return up, uploadError(err)
		}
		name, docType := p.FormName(), ""
		if dt, ok := strings.CutPrefix(name, "file."); ok && dt != "" {
			name, docType = "file", dt
		}
		switch {
		case name == "idDocType":
			name = "docType" // the name POST …/verify uses
		case name == "type":
			name = "kind"
		case p.FileName() != "" && !slices.Contains([]string{"file", "image", "front", "back"}, name):
			name = "file" // a file under any other name
		}
		switch name {
		case "kind", "side", "docType", "country":
			b, err := io.ReadAll(io.LimitReader(p, 256))
			if err != nil {
				return up, uploadError(err)
			}
			v := strings.TrimSpace(string(b))
			switch name {
			case "kind":
				if up.Kind == "" || p.FormName() == "kind" {
					up.Kind = v
				}
			case "side":
				up.Side = v
			case "country":
				up.Country = strings.ToUpper(v) // a person types "deu"
			default:
				up.DocType = v
			}
		case "file", "image", "front", "back":
			b, err := io.ReadAll(io.LimitReader(p, imagecheck.MaxBytes+1))
			if err != nil {
				return up, uploadError(err)
			}
			size := int64(len(b))
			if size > imagecheck.MaxBytes {
				// Past the limit only its size is kept, to say it: the rest
				// is counted, not held (the body limit bounds it).
				n, err := io.Copy(io.Discard, p)
				if err != nil {
					return up, uploadError(err)
				}
				size += n
			}
			if p.FileName() == "" && size == 0 {
				continue // an input left empty
			}
			if name == "image" {
				name = "file"
			}
			if docType != "" {
				// Named by its type, so an error names the input.
				files = append(files, filePart{name: "file." + docType, docType: docType, data: b, size: size})
				continue
			}
			files = append(files, filePart{name: name, data: b, size: size})
			count[name]++
		default:
			if _, err := io.Copy(io.Discard, p); err != nil {
				return up, uploadError(err)
			}
		}
	}
	seen := map[string]int{}
	for _, f := range files {
		field := f.name
		if count[f.name] > 1 {
			field = fmt.Sprintf("%s[%d]", f.name, seen[f.name])
		}
		seen[f.name]++
		if f.size > imagecheck.MaxBytes {
			// imagecheck's words, with the file's size, not the bytes read.
			return up, store.Invalid(field, "%s is %d bytes; at most 10 MiB (%d bytes) is allowed", field, f.size, imagecheck.MaxBytes)
		}
		side := ""
		if f.name == "front" || f.name == "back" {
			side = f.name
		}
		up.Files = append(up.Files, store.SDKFile{Field: field, Side: side, DocType: f.docType, Data: f.data})
	}
	return up, nil
}

// readJSONUpload reads the JSON form of an upload: one base64 image.
func readJSONUpload(r *http.Request) (store.SDKUpload, error) {
	var in store.DocumentInput
	if err := wire.Decode(r, &in); err != nil {
		return store.SDKUpload{}, err
	}
	up := store.SDKUpload{Kind: in.Kind, Side: in.Side, DocType: in.DocType, Country: in.Country}
	if in.Image == "" {
		return up, store.Invalid("image", "image is required: base64 of a JPEG, PNG or PDF")
	}
	img, err := store.DecodeImage("image", in.Image, true)
	if err != nil {
		return up, err
	}
	up.Files = []store.SDKFile{{Field: "image", Data: img.Data}}
	return up, nil
}

// uploadError maps a failure to read a multipart body to ETOOLARGE past the
// body limit, else EINVALID.
func uploadError(err error) error {
	if e := wire.TooLarge(err); e != nil {
		return e
	}
	return store.Invalid("body", "malformed multipart body")
}
