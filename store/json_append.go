package store

import "encoding/json"

// Hand-written JSON encoders for what every withdrawal encodes: its record,
// its transaction.created data and the envelope of its events. Each writes
// exactly the bytes encoding/json writes for the same value (json_append_test
// holds them to it); encoding/json's reflection and its check of every
// Time's MarshalJSON output were 4 % of the CPU of complyperf's write phase.

// jsonAppender is event data that encodes itself (newEvent).
type jsonAppender interface{ appendJSON(b []byte) []byte }

// appendJSONString appends s as encoding/json does: a string of printable
// ASCII needing no escape as is, anything else through encoding/json (its
// HTML escapes, \u2028, invalid UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendJSONStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONTime appends t as JSON: null when zero, else the string in
// TimeLayout (Time.MarshalJSON writes it so too).
func appendJSONTime(b []byte, t Time) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeLayout)
	return append(b, '"')
}

// jsonObject appends the members of one JSON object to b, which start
// opens.
type jsonObject struct {
	b    []byte
	more bool // a member was appended
}

func (o *jsonObject) start(b []byte) { o.b, o.more = append(b, '{'), false }

// key appends a member's name; k needs no escape.
func (o *jsonObject) key(k string) {
	if o.more {
		o.b = append(o.b, ',')
	}
	o.more = true
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObject) str(k, v string)            { o.key(k); o.b = appendJSONString(o.b, v) }
func (o *jsonObject) strPtr(k string, v *string) { o.key(k); o.b = appendJSONStringPtr(o.b, v) }
func (o *jsonObject) time(k string, v Time)      { o.key(k); o.b = appendJSONTime(o.b, v) }
func (o *jsonObject) raw(k string, v []byte)     { o.key(k); o.b = append(o.b, v...) }
func (o *jsonObject) end() []byte                { return append(o.b, '}') }

func (x *Transaction) appendJSON(b []byte) []byte {
	var o jsonObject
	o.start(b)
	o.str("transactionId", x.TransactionID)
	o.str("type", x.Type)
	o.str("status", x.Status)
	o.strPtr("previousStatus", x.PreviousStatus)
	o.str("vaultId", x.VaultID)
	o.str("vaultExternalId", x.VaultExternalID)
	o.str("vaultName", x.VaultName)
	o.str("assetId", x.AssetID)
	o.str("assetSymbol", x.AssetSymbol)
	o.str("assetNetwork", x.AssetNetwork)
	o.strPtr("sourceWalletId", x.SourceWalletID)
	o.strPtr("destinationWalletId", x.DestinationWalletID)
	o.str("amount", x.Amount)
	o.str("sourceAddress", x.SourceAddress)
	o.str("destinationAddress", x.DestinationAddress)
	o.strPtr("destinationTag", x.DestinationTag)
	o.strPtr("txHash", x.TxHash)
	o.strPtr("networkFee", x.NetworkFee)
	o.strPtr("feeCurrency", x.FeeCurrency)
	o.strPtr("amountUSD", x.AmountUSD)
	o.strPtr("feeUSD", x.FeeUSD)
	o.strPtr("note", x.Note)
	o.strPtr("failureReason", x.FailureReason)
	o.time("createdAt", x.CreatedAt)
	o.time("updatedAt", x.UpdatedAt)
	o.time("completedAt", x.CompletedAt)
	return o.end()
}

func (d txCreatedData) appendJSON(b []byte) []byte {
	var o jsonObject
	o.start(b)
	o.str("transactionId", d.TransactionID)
	o.str("type", d.Type)
	o.str("status", d.Status)
	o.str("vaultId", d.VaultID)
	o.str("vaultExternalId", d.VaultExternalID)
	o.str("vaultName", d.VaultName)
	o.str("assetId", d.AssetID)
	o.str("assetSymbol", d.AssetSymbol)
	o.str("assetNetwork", d.AssetNetwork)
	o.strPtr("sourceWalletId", d.SourceWalletID)
	o.strPtr("destinationWalletId", d.DestinationWalletID)
	o.str("amount", d.Amount)
	o.str("sourceAddress", d.SourceAddress)
	o.str("destinationAddress", d.DestinationAddress)
	o.strPtr("destinationTag", d.DestinationTag)
	o.strPtr("txHash", d.TxHash)
	o.strPtr("networkFee", d.NetworkFee)
	o.strPtr("feeCurrency", d.FeeCurrency)
	o.strPtr("amountUSD", d.AmountUSD)
	o.strPtr("feeUSD", d.FeeUSD)
	o.strPtr("note", d.Note)
	o.time("createdAt", d.CreatedAt)
	return o.end()
}

func (d balanceData) appendJSON(b []byte) []byte {
	var o jsonObject
	o.start(b)
	o.str("vaultAccountId", d.VaultAccountID)
	o.str("assetId", d.AssetID)
	return o.end()
}

// appendEnvelope appends the envelope of an event whose data is encoded,
// and returns where in it the timestamp's value starts (Event.restamp).
func appendEnvelope(b []byte, id, eventType, entityType, entityID string, ts Time, data []byte) (envelope []byte, stampAt int) {
	var o jsonObject
	o.start(b)
	o.str("id", id)
	o.str("eventType", eventType)
	o.str("entityType", entityType)
	o.str("entityId", entityID)
	o.key("timestamp")
	stampAt = len(o.b)
	o.b = appendJSONTime(o.b, ts)
	o.raw("data", data)
	return o.end(), stampAt
}
