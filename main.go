// Command complybox runs the complybox appliance: a KYC/KYB verification
// service and a custody-events service with signed webhooks, in one binary on
// one embedded bbolt file.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	// A closed stdout (`complybox credentials create | true`) is a failed
	// write that the command reports and undoes, as a full disk is, not a
	// SIGPIPE death that keeps a secret nobody saw.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal during shutdown kills the process at once
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// run runs the complybox command line with args (without the program name),
// reading stdin and taking COMPLYBOX_* overrides from environ (KEY=VALUE
// pairs), and returns the exit code: 0, 2 for a usage error, 1 for any other
// failure, which it prints to stderr as "complybox: <message>". Cancelling
// ctx stops a running server gracefully.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	a := &app{stdin: stdin, stderr: stderr, environ: environ}
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "complybox:", errorMessage(err))
	return exitCode(err)
}

func newRootCmd(a *app) *cobra.Command {
	root := group(&cobra.Command{
		Use:   "complybox",
		Short: "KYC/KYB verification and custody webhooks in one binary",
		Long: "complybox runs a KYC/KYB verification service and a custody-events service\n" +
			"with signed webhooks from a durable outbox, in one process on one bbolt file.",
		SilenceErrors: true,
		SilenceUsage:  true,
	})
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return misuse(c, err.Error())
	})
	root.SetHelpCommand(newHelpCmd())
	root.AddCommand(
		newServeCmd(a),
		newCredentialsCmd(a),
		newConsoleCmd(a),
		newBackupCmd(a),
		newSeedCmd(a),
		newCompactCmd(a),
		newDemoCmd(a),
		newVerifySignatureCmd(a),
		newVersionCmd(),
	)
	return root
}

// newHelpCmd builds `complybox help [COMMAND]`: cobra's help, except that an
// unknown command is a usage error rather than a message and exit 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(cmd *cobra.Command, topic []string) error {
			target, rest, err := cmd.Root().Find(topic)
			if err != nil || target == nil || len(rest) > 0 {
				return misuse(cmd, fmt.Sprintf("unknown help topic %q", strings.Join(topic, " ")))
			}
			return target.Help()
		},
	}
}
