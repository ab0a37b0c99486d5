package payments

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"xr/app"
)

// Gateway is a tenant's configuration of one provider. Secrets are never
// answered: SecretsSet says which are stored.
type Gateway struct {
	Code         string    `json:"code"`
	Provider     string    `json:"provider"`
	Enabled      bool      `json:"enabled"`
	DisplayName  string    `json:"display_name"`
	Currency     string    `json:"currency"`
	MinAmount    app.Money `json:"min_amount"`
	FeeFixed     app.Money `json:"fee_fixed"`
	FeePercentBP int64     `json:"fee_percent_bp"` // basis points: 250 = 2.5 %
	Instructions string    `json:"instructions"`
	SecretsSet   []string  `json:"secrets_set"`
	SecretKeys   []string  `json:"secret_keys"`
	UpdatedAt    *app.Time `json:"updated_at"`
}

// FeePercentText renders the fee percent for a form: 250 → "2.5".
func (g Gateway) FeePercentText() string { return app.Money(g.FeePercentBP * 10).String() }

// GatewayInput is PUT /admin/payments/gateways/{code}. Secrets are
// write-only: a key given replaces the stored one, an empty string erases
// it, an absent key keeps it.
type GatewayInput struct {
	Enabled      *bool             `json:"enabled"`
	DisplayName  *string           `json:"display_name"`
	Currency     *string           `json:"currency"`
	MinAmount    *app.Money        `json:"min_amount"`
	FeeFixed     *app.Money        `json:"fee_fixed"`
	FeePercentBP *int64            `json:"fee_percent_bp"`
	Instructions *string           `json:"instructions"`
	Secrets      map[string]string `json:"secrets"`
}

// PortalGateway is a row of GET /portal/payments/gateways.
type PortalGateway struct {
	Code         string    `json:"code"`
	Name         string    `json:"name"`
	Currency     string    `json:"currency"`
	MinAmount    app.Money `json:"min_amount"`
	FeeFixed     app.Money `json:"fee_fixed"`
	FeePercentBP int64     `json:"fee_percent_bp"`
	Redirects    bool      `json:"redirects"` // the payer is sent to the provider's page
}

// ListGateways answers every provider with its tenant configuration
// (unconfigured ones disabled), for staff with prm_settings.
func ListGateways(ctx context.Context, act *app.Actor) ([]Gateway, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	t := act.Tenant
	out := []Gateway{}
	for _, code := range ProviderCodes(t.App) {
		g, _, err := readGateway(ctx, t, t.DB.R, code)
		if err != nil {
			return nil, err
		}
		out = append(out, *g)
	}
	return out, nil
}

// SetGateway configures a provider for the tenant (prm_settings).
func SetGateway(ctx context.Context, act *app.Actor, code string, in GatewayInput) (*Gateway, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	pr, ok := providerOf(act.Tenant.App, code)
	if !ok {
		return nil, app.ErrNotFound()
	}
	if in.Currency != nil {
		c := strings.ToUpper(strings.TrimSpace(*in.Currency))
		if c != "" && (len(c) != 3 || strings.Trim(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "") {
			return nil, app.ErrValidation("currency_invalid", "currency")
		}
		in.Currency = &c
	}
	for _, m := range []struct {
		v     *app.Money
		field string
	}{{in.MinAmount, "min_amount"}, {in.FeeFixed, "fee_fixed"}} {
		if m.v != nil && (*m.v < 0 || !m.v.InAmountRange()) {
			return nil, app.ErrAmountOutOfRange(m.field)
		}
	}
	if in.FeePercentBP != nil && (*in.FeePercentBP < 0 || *in.FeePercentBP > 10000) {
		return nil, app.ErrValidation("out_of_range", "fee_percent_bp")
	}
	if in.DisplayName != nil && len(*in.DisplayName) > 100 {
		return nil, app.ErrValidation("too_long", "display_name")
	}
	if in.Instructions != nil && len(*in.Instructions) > 4000 {
		return nil, app.ErrValidation("too_long", "instructions")
	}
	allowed := map[string]bool{}
	for _, k := range pr.SecretKeys() {
		allowed[k] = true
	}
	for k := range in.Secrets {
		if !allowed[k] {
			return nil, app.ErrValidation("unknown_secret", "secrets."+k)
		}
	}
	t := act.Tenant
	var out *Gateway
	err := t.Write(ctx, func(tx *sql.Tx) error {
		g, secrets, err := readGateway(ctx, t, tx, code)
		if err != nil {
			return err
		}
		setIf(&g.Enabled, in.Enabled)
		setIf(&g.DisplayName, in.DisplayName)
		setIf(&g.Currency, in.Currency)
		setIf(&g.MinAmount, in.MinAmount)
		setIf(&g.FeeFixed, in.FeeFixed)
		setIf(&g.FeePercentBP, in.FeePercentBP)
		setIf(&g.Instructions, in.Instructions)
		for k, v := range in.Secrets {
			if v == "" {
				delete(secrets, k)
			} else {
				secrets[k] = v
			}
		}
		if g.Enabled {
			for _, k := range pr.SecretKeys() {
				if secrets[k] == "" {
					return app.ErrConflict("gateway_not_configured").With("field", "secrets."+k)
				}
			}
		}
		b, err := json.Marshal(secrets)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO payment_gateways(code, enabled, display_name, currency, min_amount, fee_fixed, fee_percent_bp, instructions, secrets_sealed, updated_at)
			VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(code) DO UPDATE SET enabled = excluded.enabled, display_name = excluded.display_name,
			currency = excluded.currency, min_amount = excluded.min_amount, fee_fixed = excluded.fee_fixed, fee_percent_bp = excluded.fee_percent_bp,
			instructions = excluded.instructions, secrets_sealed = excluded.secrets_sealed, updated_at = excluded.updated_at`,
			code, g.Enabled, g.DisplayName, g.Currency, int64(g.MinAmount), int64(g.FeeFixed), g.FeePercentBP, g.Instructions,
			t.App.Keys.Seal(b), t.NowText())
		if err != nil {
			return err
		}
		out, _, err = readGateway(ctx, t, tx, code)
		return err
	})
	return out, err
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// readGateway reads a provider's configuration and its unsealed secrets;
// a provider never configured reads as disabled with the tenant currency.
func readGateway(ctx context.Context, t *app.Tenant, q app.Querier, code string) (*Gateway, map[string]string, error) {
	pr, ok := providerOf(t.App, code)
	if !ok {
		return nil, nil, app.ErrNotFound()
	}
	g := &Gateway{Code: code, Provider: pr.Name(), DisplayName: pr.Name(), SecretKeys: append([]string{}, pr.SecretKeys()...), SecretsSet: []string{}}
	var minAmt, feeFixed int64
	var sealed []byte
	var updated app.Time
	err := q.QueryRowContext(ctx, `SELECT enabled, display_name, currency, min_amount, fee_fixed, fee_percent_bp, instructions, secrets_sealed, NULLIF(updated_at, '')
		FROM payment_gateways WHERE code = ?`, code).Scan(&g.Enabled, &g.DisplayName, &g.Currency, &minAmt, &feeFixed, &g.FeePercentBP, &g.Instructions, &sealed, &updated)
	secrets := map[string]string{}
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, nil, err
	default:
		g.MinAmount, g.FeeFixed = app.Money(minAmt), app.Money(feeFixed)
		if !updated.IsZero() {
			g.UpdatedAt = &updated
		}
		if len(sealed) > 0 {
			plain, err := t.App.Keys.Open(sealed)
			if err != nil {
				return nil, nil, err
			}
			if err := json.Unmarshal(plain, &secrets); err != nil {
				return nil, nil, err
			}
		}
	}
	if g.Currency == "" {
		cur, err := app.SettingCurrency.Get(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		g.Currency = strings.ToUpper(cur)
	}
	for _, k := range pr.SecretKeys() {
		if secrets[k] != "" {
			g.SecretsSet = append(g.SecretsSet, k)
		}
	}
	return g, secrets, nil
}

// EnabledGateways answers the gateways a payer may use now.
func EnabledGateways(ctx context.Context, t *app.Tenant) ([]PortalGateway, error) {
	out := []PortalGateway{}
	for _, code := range ProviderCodes(t.App) {
		g, _, err := readGateway(ctx, t, t.DB.R, code)
		if err != nil {
			return nil, err
		}
		if !g.Enabled {
			continue
		}
		_, redirects := mustProvider(t.App, code).(Receiver)
		out = append(out, PortalGateway{Code: g.Code, Name: g.DisplayName, Currency: g.Currency, MinAmount: g.MinAmount,
			FeeFixed: g.FeeFixed, FeePercentBP: g.FeePercentBP, Redirects: redirects})
	}
	return out, nil
}

func mustProvider(a *app.App, code string) Provider { p, _ := providerOf(a, code); return p }

// fee is what the gateway adds to amount: fixed + percent, rounded up to
// the currency's minor unit so the total is payable.
func (g *Gateway) fee(amount app.Money) (app.Money, error) {
	pct, err := amount.MulDiv(g.FeePercentBP, 10000)
	if err != nil {
		return 0, app.ErrAmountOutOfRange("amount")
	}
	f, err := g.FeeFixed.Add(pct)
	if err != nil {
		return 0, app.ErrAmountOutOfRange("amount")
	}
	unit := app.Money(minorFactor(g.Currency))
	if r := f % unit; r != 0 {
		f += unit - r
	}
	return f, nil
}
