package main

import (
	"testing"
	"time"
)

// TestRetentionConfig: [retention] deliveries defaults to 720h, is set by
// the file or COMPLYBOX_RETENTION_DELIVERIES, reaches the store's settings,
// and a bad or too long value stops start-up naming the key.
func TestRetentionConfig(t *testing.T) {
	cfg, _, err := loadConfig(configFlags{}, nil)
	if err != nil || time.Duration(cfg.Retention.Deliveries) != 720*time.Hour {
		t.Fatalf("default %v, %v", cfg.Retention.Deliveries, err)
	}
	cfg, _, err = loadConfig(configFlags{path: writeConfig(t, "[retention]\ndeliveries = \"48h\"\n")}, []string{"COMPLYBOX_RETENTION_DELIVERIES=90m"})
	if err != nil || cfg.settings("http://x").Retention.Deliveries != 90*time.Minute {
		t.Fatalf("env over file: %v, %v", cfg.Retention.Deliveries, err)
	}
	for _, text := range []string{"[retention]\ndeliveries = \"0s\"\n", "[retention]\ndeliveries = \"-1h\"\n", "[retention]\ndeliveries = \"soon\"\n"} {
		_, _, err := loadConfig(configFlags{path: writeConfig(t, text)}, nil)
		wantErr(t, err, "retention.deliveries")
	}
	// A window past 10 years (876000h once removed everything at the
	// first batch) stops start-up naming the key and the bound, from the
	// file or the environment; 10 years itself is taken.
	for _, text := range []string{"876000h", "500000h", "2562047h", "87601h"} {
		_, _, err := loadConfig(configFlags{path: writeConfig(t, "[retention]\ndeliveries = \""+text+"\"\n")}, nil)
		wantErr(t, err, "retention.deliveries", "87600h")
		_, _, err = loadConfig(configFlags{}, []string{"COMPLYBOX_RETENTION_DELIVERIES=" + text})
		wantErr(t, err, "retention.deliveries", "87600h")
	}
	if cfg, _, err := loadConfig(configFlags{}, []string{"COMPLYBOX_RETENTION_DELIVERIES=87600h"}); err != nil || cfg.settings("http://x").Retention.Deliveries != 87600*time.Hour {
		t.Fatalf("87600h: %v, %v", cfg.Retention.Deliveries, err)
	}
}
