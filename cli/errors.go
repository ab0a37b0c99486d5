package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/assets"
)

// The error contract of the command line. With --json, a failure prints
// one object {"error":{"code","reason","field","message"[,"details"]}} on
// stdout; without it, one readable sentence from the message catalogue on
// stderr, followed by the reason and field in brackets for scripts that
// grep, and, for a usage mistake (unknown command or flag, missing
// required flag, wrong arguments), the command's usage line. The exit code
// is 2 for a usage mistake and 1 for any other failure.

// Exit codes.
const (
	exitFailure = 1
	exitUsage   = 2
)

// cliError is one failure as the command line reports it.
type cliError struct {
	Code    string         `json:"code"`
	Reason  string         `json:"reason"`
	Field   *string        `json:"field"` // null when no field is concerned
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`

	usage bool // a usage mistake: exit 2, usage line printed
}

// usageError marks an error cobra raised while parsing the command line.
type usageError struct {
	reason, field string
	err           error
	details       map[string]any
}

func (u *usageError) Error() string { return u.err.Error() }

// enMessages is the English catalogue: reason → sentence.
var enMessages = loadEnglish()

func loadEnglish() map[string]string {
	b, err := assets.Messages.ReadFile("messages/en.json")
	if err != nil {
		panic("message catalogue: " + err.Error())
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		panic("message catalogue en.json: " + err.Error())
	}
	return m
}

// messageFor is the sentence of a reason, else of its class, else the
// reason in words.
func messageFor(reason, code string) string {
	if s, ok := enMessages[reason]; ok {
		return s
	}
	if s, ok := enMessages["code:"+code]; ok {
		return s
	}
	return strings.ReplaceAll(reason, "_", " ")
}

var (
	flagNameRe    = regexp.MustCompile(`--([A-Za-z0-9][A-Za-z0-9-]*)`)
	shorthandRe   = regexp.MustCompile(`'(.)' in -`)
	requiredRe    = regexp.MustCompile(`"([^"]+)"`)
	unknownCmdRe  = regexp.MustCompile(`^unknown command "([^"]*)" for "([^"]*)"`)
	suggestLineRe = regexp.MustCompile(`^\s+(\S+)\s*$`)
)

// classifyUsage recognises cobra's own errors (argument validators,
// required flags, unknown commands); flag parsing errors arrive already
// wrapped by flagError.
func classifyUsage(err error) *usageError {
	var u *usageError
	if errors.As(err, &u) {
		return u
	}
	s := err.Error()
	switch {
	case strings.HasPrefix(s, "required flag(s)"):
		var names []string
		for _, m := range requiredRe.FindAllStringSubmatch(s, -1) {
			names = append(names, m[1])
		}
		u := &usageError{reason: "flag_required", err: err, details: map[string]any{"flags": names}}
		if len(names) > 0 {
			u.field = names[0]
		}
		return u
	case unknownCmdRe.MatchString(s):
		m := unknownCmdRe.FindStringSubmatch(s)
		var sugg []string
		after := false
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "Did you mean") {
				after = true
				continue
			}
			if sm := suggestLineRe.FindStringSubmatch(line); after && sm != nil {
				sugg = append(sugg, sm[1])
			}
		}
		d := map[string]any{"command": m[1], "parent": m[2]}
		if len(sugg) > 0 {
			d["suggestions"] = sugg
		}
		return &usageError{reason: "unknown_command", err: err, details: d}
	case strings.HasPrefix(s, "accepts ") || strings.HasPrefix(s, "requires at least") || strings.HasPrefix(s, "requires at most") ||
		strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "invalid argument"):
		return &usageError{reason: "invalid_arguments", err: err, details: map[string]any{"detail": firstLine(s)}}
	}
	return nil
}

// flagError is every command's FlagErrorFunc: an unknown flag, a missing
// value or a value of the wrong type.
func flagError(cmd *cobra.Command, err error) error {
	s := err.Error()
	u := &usageError{reason: "invalid_flag", err: err, details: map[string]any{"detail": firstLine(s)}}
	if m := flagNameRe.FindStringSubmatch(s); m != nil {
		u.field = m[1]
	} else if m := shorthandRe.FindStringSubmatch(s); m != nil {
		u.field = m[1]
	}
	return u
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// describe turns any error into the CLI's error shape.
func describe(err error) cliError {
	if u := classifyUsage(err); u != nil {
		e := cliError{Code: app.CodeValidation, Reason: u.reason, Message: messageFor(u.reason, app.CodeValidation), Details: u.details, usage: true}
		if u.field != "" {
			e.Field = &u.field
		}
		return e
	}
	if ae := app.Classify(err); ae != nil {
		e := cliError{Code: ae.Code, Reason: ae.Reason, Message: messageFor(ae.Reason, ae.Code)}
		field := ae.Field
		if field == "" {
			field, _ = ae.Details["field"].(string)
		}
		if field != "" {
			e.Field = &field
		}
		for k, v := range ae.Details {
			if k == "field" || k == "reason" {
				continue
			}
			if e.Details == nil {
				e.Details = map[string]any{}
			}
			e.Details[k] = v
		}
		if ae.Status >= 500 && ae.Cause != nil {
			// An operator at a terminal needs the cause a web client is
			// never shown.
			e.Message += " " + oneLineText(ae.Cause.Error())
		}
		return e
	}
	// Errors outside the catalogue (a file that cannot be read, a port in
	// use): their own text is the message.
	return cliError{Code: app.CodeInternal, Reason: "command_failed", Message: oneLineText(err.Error())}
}

func oneLineText(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// text is the readable form: the sentence, then [reason, field F] and any
// details, on one line.
func (e cliError) text() string {
	var b strings.Builder
	b.WriteString(e.Message)
	if cmd, ok := e.Details["command"].(string); ok && e.Reason == "unknown_command" {
		fmt.Fprintf(&b, " (%q)", cmd)
		if s, ok := e.Details["suggestions"].([]string); ok && len(s) > 0 {
			fmt.Fprintf(&b, " Did you mean %s?", strings.Join(s, " or "))
		}
	}
	b.WriteString(" [")
	b.WriteString(e.Reason)
	if e.Field != nil {
		if e.usage {
			b.WriteString(", flag --" + *e.Field)
		} else {
			b.WriteString(", field " + *e.Field)
		}
	}
	var keys []string
	for k := range e.Details {
		if k != "command" && k != "suggestions" && k != "parent" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := e.Details[k].(type) {
		case string, int, int64, float64, bool:
			fmt.Fprintf(&b, ", %s: %v", k, v)
		}
	}
	b.WriteString("]")
	return b.String()
}

// report writes err as the contract says and returns the exit code. cmd
// is the command that failed (its usage line goes with a usage mistake).
func report(cmd *cobra.Command, err error, asJSON bool, stdout, stderr io.Writer) int {
	e := describe(err)
	code := exitFailure
	if e.usage {
		code = exitUsage
		if cmd != nil {
			if e.Details == nil {
				e.Details = map[string]any{}
			}
			e.Details["usage"] = cmd.UseLine()
			if cmd.HasAvailableSubCommands() {
				e.Details["usage"] = cmd.CommandPath() + " [command]"
			}
		}
	}
	if asJSON {
		b, merr := json.Marshal(map[string]any{"error": e})
		if merr != nil {
			b = []byte(`{"error":{"code":"ERR_INTERNAL","reason":"command_failed","field":null,"message":"the error could not be encoded"}}`)
		}
		fmt.Fprintln(stdout, string(b))
		return code
	}
	usage, _ := e.Details["usage"].(string)
	delete(e.Details, "usage")
	fmt.Fprintln(stderr, "xr: "+e.text())
	if e.usage && usage != "" {
		fmt.Fprintf(stderr, "Usage: %s\nRun '%s --help' for more.\n", usage, cmd.CommandPath())
	}
	return code
}

// wantsJSON says whether --json was among the arguments, even when the
// parse stopped before reaching it.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		switch a {
		case "--json", "--json=true", "--json=1", "--json=t", "--json=TRUE", "--json=True":
			return true
		}
	}
	return false
}
