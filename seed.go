package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/store"
)

// seedCounts is what seed makes.
type seedCounts struct {
	applicants, transactions, deliveries int
	wallets                              int
	workers                              int
}

func newSeedCmd(a *app) *cobra.Command {
	var f configFlags
	n := seedCounts{wallets: 1000, workers: 64}
	cmd := &cobra.Command{
		Use:   "seed --db FILE --applicants N --transactions N --deliveries N",
		Short: "Fill a db with generated data, for scale measurements",
		Long: "seed fills a stopped server's db in the sandbox environment through the store's\n" +
			"own operations, so indexes, history and outbox are what a server would have\n" +
			"written: N applicants, N deposits spread over --wallets wallets, and delivered\n" +
			"webhook deliveries of their events (more events by advancing the deposits,\n" +
			"then test events, until there are --deliveries), all on the sandbox clock.\n" +
			"Nothing is sent: seed records each attempt itself. A custody webhook or KYC\n" +
			"callback already set is kept; where none is, a discard URL on 127.0.0.1:9\n" +
			"stands in: the callback's is removed at the end, the webhook's stays (set\n" +
			"your own before serving). Retention and production work are left to the\n" +
			"server. Commits skip fsync until the end: a crash during seed can lose the file.",
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n.applicants < 0 || n.transactions < 0 || n.deliveries < 0 {
				return usageError("seed: counts must not be negative")
			}
			if n.applicants == 0 && n.transactions == 0 && n.deliveries == 0 {
				return usageError("seed: nothing to seed: give --applicants, --transactions or --deliveries")
			}
			if n.wallets < 1 || n.workers < 1 {
				return usageError("seed: --wallets and --workers must be at least 1")
			}
			cfg, warnings, err := loadConfig(f, a.environ)
			if err != nil {
				return err
			}
			logger := newLogger(cfg.Log, a.stderr)
			for _, w := range warnings {
				logger.Warn(w)
			}
			st, err := store.Open(cfg.DB, store.Options{Logger: logger, NoSync: true})
			if err != nil {
				return err
			}
			err = seed(cmd.Context(), st, n, cmd.OutOrStdout())
			if cerr := st.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close db: %w", cerr)
			}
			return err
		},
	}
	addConfigFlags(cmd, &f)
	cmd.Flags().IntVar(&n.applicants, "applicants", 0, "applicants to create")
	cmd.Flags().IntVar(&n.transactions, "transactions", 0, "deposits to create")
	cmd.Flags().IntVar(&n.deliveries, "deliveries", 0, "delivered webhook deliveries to end with (at least what the other records produce)")
	cmd.Flags().IntVar(&n.wallets, "wallets", n.wallets, "wallets the deposits are spread over")
	cmd.Flags().IntVar(&n.workers, "workers", n.workers, "concurrent operations (they share commits)")
	return cmd
}

// seedHook is where the generated webhooks point: loopback port 9 (discard),
// never called, since seed records every attempt itself.
const seedHook = "http://127.0.0.1:9/complybox-seed"

// seed runs the generator on an open store and reports each phase to out,
// keeping a custody webhook and KYC callback the partner set.
func seed(ctx context.Context, st *store.Store, n seedCounts, out io.Writer) error {
	env := store.Sandbox
	// The partner's own webhook and callback stay: seed records every
	// attempt itself, so nothing is sent to them. Where none is set, seed's
	// discard URL stands in; the callback's is taken away again at the end.
	hook, err := st.WebhookConfig(env)
	if err != nil {
		return fmt.Errorf("seed: webhook: %w", err)
	}
	if !hook.IsConfigured {
		if _, err := st.SetWebhook(ctx, env, seedHook, nil); err != nil {
			return fmt.Errorf("seed: webhook: %w", err)
		}
	}
	generated, err := st.InitCallback()
	if err != nil {
		return fmt.Errorf("seed: callback: %w", err)
	}
	callback, err := st.CallbackURL()
	if err != nil {
		return fmt.Errorf("seed: callback: %w", err)
	}
	if callback == "" {
		if err := st.SetCallbackURL(ctx, seedHook); err != nil {
			return fmt.Errorf("seed: callback: %w", err)
		}
	}
	err = seedRecords(ctx, st, n, out)
	if callback == "" {
		if cerr := st.SetCallbackURL(context.WithoutCancel(ctx), ""); cerr != nil && err == nil {
			err = fmt.Errorf("seed: callback: %w", cerr)
		}
	}
	// A signing secret seed generated was shown to nobody: it goes, and
	// the first serve generates one and prints it.
	if generated != "" {
		if cerr := st.DiscardCallbackSecret(generated); cerr != nil && err == nil {
			err = fmt.Errorf("seed: callback: %w", cerr)
		}
	}
	return err
}

// seedRecords makes seed's records and their deliveries.
func seedRecords(ctx context.Context, st *store.Store, n seedCounts, out io.Writer) error {
	env := store.Sandbox
	phase := func(name string, count int, start time.Time) {
		el := time.Since(start)
		fmt.Fprintf(out, "%-13s %9d in %6.1fs (%.0f/s)\n", name, count, el.Seconds(), float64(count)/max(el.Seconds(), 1e-9))
	}
	run := fmt.Sprintf("%x", time.Now().UnixNano()) // externalUserIds stay unique across runs

	start := time.Now()
	err := parallel(ctx, n.workers, n.applicants, func(i int) error {
		_, _, err := st.CreateApplicant(env, store.ApplicantInput{
			"externalUserId": json.RawMessage(fmt.Sprintf("%q", fmt.Sprintf("seed-%s-%d", run, i))),
			"type":           json.RawMessage(`"individual"`),
			"email":          json.RawMessage(fmt.Sprintf("%q", fmt.Sprintf("seed%d@example.com", i))),
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("seed: applicants: %w", err)
	}
	phase("applicants", n.applicants, start)

	var wallets []string
	if n.transactions > 0 {
		start = time.Now()
		wallets = make([]string, min(n.wallets, n.transactions))
		err = parallel(ctx, n.workers, len(wallets), func(i int) error {
			name := fmt.Sprintf("seed-%d", i)
			v, err := st.CreateVault(env, store.VaultInput{Name: &name}, store.Idem{})
			if err != nil {
				return err
			}
			sym := "ETH"
			w, err := st.CreateWallet(env, v.VaultID, store.WalletInput{AssetSymbol: &sym}, store.Idem{})
			wallets[i] = w.WalletID
			return err
		})
		if err != nil {
			return fmt.Errorf("seed: wallets: %w", err)
		}
		phase("wallets", len(wallets), start)
	}
	start = time.Now()
	txs := make([]string, n.transactions)
	amount := "0.01"
	err = parallel(ctx, n.workers, n.transactions, func(i int) error {
		x, err := st.CreateDeposit(env, store.DepositInput{WalletID: &wallets[i%len(wallets)], Amount: &amount}, store.Idem{})
		txs[i] = x.TransactionID
		return err
	})
	if err != nil {
		return fmt.Errorf("seed: transactions: %w", err)
	}
	phase("transactions", n.transactions, start)

	start = time.Now()
	delivered, err := drainDeliveries(ctx, st, n.workers)
	if err != nil {
		return fmt.Errorf("seed: deliveries: %w", err)
	}
	// More events: advance the deposits (each move emits one or two: its
	// status, and the balance when it completes, so no more moves than
	// half of what is missing, or the count would overshoot), then test
	// events, one each, to the exact count.
	for round := 0; delivered < n.deliveries && round < 2 && len(txs) > 0; round++ {
		todo := min(len(txs), (n.deliveries-delivered)/2)
		if todo == 0 {
			break
		}
		err = parallel(ctx, n.workers, todo, func(i int) error {
			_, err := st.AdvanceTransaction(env, txs[i])
			return err
		})
		if err != nil {
			return fmt.Errorf("seed: advancing deposits: %w", err)
		}
		more, err := drainDeliveries(ctx, st, n.workers)
		if err != nil {
			return fmt.Errorf("seed: deliveries: %w", err)
		}
		delivered += more
	}
	for delivered < n.deliveries {
		todo := n.deliveries - delivered
		err = parallel(ctx, n.workers, todo, func(int) error {
			_, err := st.SendTestEvent(env)
			return err
		})
		if err != nil {
			return fmt.Errorf("seed: test events: %w", err)
		}
		more, err := drainDeliveries(ctx, st, n.workers)
		if err != nil {
			return fmt.Errorf("seed: deliveries: %w", err)
		}
		delivered += more
	}
	phase("deliveries", delivered, start)
	return nil
}

// drainDeliveries records a successful attempt of every due sandbox
// delivery, as a receiver answering 200 would leave them, at sandbox time
// (SPEC §7), and returns how many; other due sandbox jobs it runs. First
// attempts of one entity come due one after another, so it claims until
// nothing is due. Production work and retention are left to the server:
// seed fills the sandbox, and removes nothing.
func drainDeliveries(ctx context.Context, st *store.Store, workers int) (int, error) {
	leave := func(claim []byte) bool {
		kind, rest, _ := bytes.Cut(claim, []byte("|"))
		env, _, _ := bytes.Cut(rest, []byte("|"))
		return string(kind) == store.JobRetention || store.Env(env) != store.Sandbox
	}
	total := 0
	for {
		now, offset := st.SandboxClock()
		jobs, _, err := st.Due(now.Add(-offset), 4096, leave)
		if err != nil || len(jobs) == 0 {
			return total, err
		}
		err = parallel(ctx, workers, len(jobs), func(i int) error {
			j := jobs[i]
			if j.Kind != store.JobDelivery || j.Delivery == nil {
				return st.RunJob(j)
			}
			status := 200
			_, err := st.RecordAttempt(j, store.AttemptResult{RequestURL: cmp.Or(j.Delivery.URL, seedHook), StatusCode: status, At: now, Success: true, Duration: time.Millisecond})
			return err
		})
		if err != nil {
			return total, err
		}
		for _, j := range jobs {
			if j.Kind == store.JobDelivery && j.Delivery != nil {
				total++
			}
		}
	}
}

// parallel calls fn(0..n-1) on workers goroutines and returns the first
// error; it stops handing out work after an error or when ctx is done.
func parallel(ctx context.Context, workers, n int, fn func(i int) error) error {
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
