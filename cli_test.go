package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/store"
)

// TestErrorMessage: a store error anywhere in the chain reads as its
// message and field, without its machine code.
func TestErrorMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{store.Invalid("role", "role must be partner or admin"), "role must be partner or admin (field role)"},
		{fmt.Errorf("config: credentials[1]: %w", store.Invalid("role", "role must be partner or admin")),
			"config: credentials[1]: role must be partner or admin (field role)"},
		{store.NotFound("credential", "k"), `credential "k" not found`},
		{misuse(&cobra.Command{Use: "x"}, "no"), "no; see x --help"},
		{errors.New("listen: address in use"), "listen: address in use"},
	} {
		if got := errorMessage(tc.err); got != tc.want {
			t.Errorf("errorMessage(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
