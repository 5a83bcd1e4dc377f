package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// withClient runs a one-shot command on a client of the cluster c names.
func withClient(run func(context.Context, *kafkaadmin.Client, config, out, Stdio) error) func(context.Context, config, Stdio) error {
	return func(ctx context.Context, c config, std Stdio) error {
		warnInsecure(c, std.Err)
		o := out{w: std.Out, json: c.output == "json"}
		// Refused before touching the cluster, with the -o json document a
		// script reads from every abort, sent or not.
		if specOf(c).acts {
			switch {
			case c.ctx.readOnly:
				return refused(o, c, nil, c.auditLog, usagef("%s changes the cluster, and context %q is read-only (%s)", c.cmd, c.ctx.name, c.ctx.readOnlyAt))
			case c.readOnly:
				return refused(o, c, nil, c.auditLog, usagef("%s changes the cluster, and --read-only forbids it", c.cmd))
			case c.ctx.protected && !c.one.yes && !readsTerminal(std.In):
				return refused(o, c, nil, c.auditLog, usagef("context %q is protected: %s asks you to type %s on a terminal, and stdin is not one", c.ctx.name, c.cmd, c.confirmPhrase(confirmWordOf(c.cmd))))
			case c.ctx.protected && c.one.yes:
				return refused(o, c, nil, c.auditLog, usagef("context %q is protected: --yes is refused; on a terminal, type %s to confirm", c.ctx.name, c.confirmPhrase(confirmWordOf(c.cmd))))
			case !c.one.yes && !readsTerminal(std.In): // nobody is there to confirm
				return refused(o, c, nil, c.auditLog,
					usagef("%s needs --yes when stdin is not a terminal (on a terminal it asks you to type %s)", c.cmd, c.confirmPhrase(confirmWordOf(c.cmd))))
			}
		}
		cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: c.bootstrap, Timeout: c.timeout, Security: c.security})
		if err != nil {
			return usageError{err.Error()}
		}
		defer cl.Close()
		return run(ctx, cl, c, o, std)
	}
}

// warnInsecure warns on stderr that the brokers' certificates go unchecked;
// the UI says it in its header instead.
func warnInsecure(c config, stderr io.Writer) {
	if c.insecure() {
		fmt.Fprintf(stderr, "txnscope: warning: %s\n", insecureWarning)
	}
}

// out prints a command's result as kafka-transactions.sh's table or as JSON.
type out struct {
	w    io.Writer
	json bool
}

func (o out) emit(doc any, headers []string, rows [][]string) error {
	var err error
	if o.json {
		err = writeJSON(o.w, doc)
	} else {
		err = printTable(o.w, headers, rows)
	}
	if err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}

// writeJSON prints doc indented. encoding/json escapes C0 controls but not
// DEL, the C1 controls (some terminals act on U+009B as on ESC [) or bidi
// overrides, which ids may hold; escape.JSON writes those as \u escapes too,
// so the output is harmless on a terminal and decodes to the same values.
func writeJSON(w io.Writer, doc any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := w.Write(escape.JSON(b.Bytes()))
	return err
}

func itoa[T ~int16 | ~int32 | ~int64 | ~int](v T) string { return strconv.FormatInt(int64(v), 10) }

// afterPartial prints what was read, then reports the error: some brokers or
// partitions failed, and the rows shown are what the rest said.
func afterPartial(printErr, readErr error) error {
	if printErr != nil {
		return printErr
	}
	return readErr
}

// confirmWordOf is what the command asks the operator to type.
func confirmWordOf(cmd command) string {
	switch cmd {
	case cmdCommit:
		return "commit"
	case cmdResolve:
		return "resolve"
	}
	return "abort"
}
