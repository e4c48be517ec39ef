package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// usageError is bad command-line input: it exits with status 2.
type usageError struct {
	msg string
	// kubectl: the message is kubectl's words, printed with its "error: "
	// prefix (kubectlPrefix) instead of kwatch's.
	kubectl bool
}

// kubectlUsagef is a usage error in kubectl's words, printed as kubectl
// prints it.
func kubectlUsagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), kubectl: true}
}

// kubectlPrefix starts kubectl's own error lines.
const kubectlPrefix = "error: "

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// serverError is a refusal printed in kubectl's words, without kwatch's
// prefix, so that scripts matching kubectl's "Error from server
// (NotFound): ..." match kwatch's too. It exits with status 1.
type serverError struct{ msg string }

func (e *serverError) Error() string { return e.msg }

// pflag's messages, rewritten as one line in kwatch's (and the flag's own)
// words.
var (
	unknownShorthand = regexp.MustCompile(`^unknown shorthand flag: '(.)' in (-\S*)$`)
	needsArgShort    = regexp.MustCompile(`^flag needs an argument: '(.)' in -\S*$`)
	invalidArgument  = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-., )?(--\S+)" flag: (.*)$`)
)

// explainFlagError turns pflag's error into a usage error naming the flag
// as the user typed it.
func explainFlagError(err error) error {
	msg := err.Error()
	switch m := unknownShorthand.FindStringSubmatch(msg); {
	case m != nil && m[2] == "-"+m[1]:
		return usagef("unknown flag %s", m[2])
	case m != nil:
		return usagef("unknown flag %s: -%s is not a flag", m[2], m[1])
	}
	if n, ok := strings.CutPrefix(msg, "unknown flag: "); ok {
		return usagef("unknown flag %s", n)
	}
	if m := needsArgShort.FindStringSubmatch(msg); m != nil {
		return usagef("flag -%s needs a value", m[1])
	}
	if n, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return usagef("flag %s needs a value", n)
	}
	if m := invalidArgument.FindStringSubmatch(msg); m != nil {
		return usagef("invalid value %q for %s: %s", m[1], m[2], trimParseError(m[3]))
	}
	return usagef("%s", msg)
}

// trimParseError drops strconv's echo of the input ("parsing "x": ").
func trimParseError(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.HasPrefix(s, "strconv.") {
		return s[i+2:]
	}
	return s
}

// timeoutValue is kubectl's --request-timeout: a whole number of seconds
// ("3"), a duration ("1m", "500ms"), or 0 for no bound.
type timeoutValue struct{ d *time.Duration }

func (v timeoutValue) String() string {
	if v.d == nil || *v.d == 0 {
		return "0"
	}
	return v.d.String()
}

func (v timeoutValue) Type() string { return "string" }

func (v timeoutValue) Set(s string) error {
	d, err := parseTimeout(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// parseTimeout reads a timeout as kubectl does: an integer is seconds.
func parseTimeout(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a whole number of seconds or a duration with a unit (1s, 2m, 3h), 0 for none")
	}
	return d, nil
}

var _ pflag.Value = timeoutValue{}
