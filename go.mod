module github.com/complybox/complybox

go 1.26.8

require (
	github.com/google/uuid v1.6.0
	github.com/julienschmidt/httprouter v1.3.0
	go.etcd.io/bbolt v1.5.0
)

require golang.org/x/sys v0.49.0 // indirect
