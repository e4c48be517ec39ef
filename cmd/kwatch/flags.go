package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// flagSpec describes one flag for the help text.
type flagSpec struct {
	short, long string
	arg         string // "" for a boolean flag
	usage       string
}

// flagSet is a flag.FlagSet with kubectl habits: a short and a long name
// for one flag (-n/--namespace), "--flag=value" and "--flag value",
// flags anywhere among the arguments ("kwatch pods -n demo" and
// "kwatch -n demo pods"), "-owide" and "-Aw" short forms, and "--" ending
// the flags. The standard package alone stops at the first argument that
// is not a flag.
type flagSet struct {
	fs    *flag.FlagSet
	specs []flagSpec
}

func newFlagSet(name string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by the caller
	fs.Usage = func() {}
	return &flagSet{fs: fs}
}

func (f *flagSet) alias(short, long, arg, usage string) {
	if short != "" {
		f.fs.Var(f.fs.Lookup(long).Value, short, usage)
	}
	f.specs = append(f.specs, flagSpec{short: short, long: long, arg: arg, usage: usage})
}

func (f *flagSet) stringVar(p *string, short, long, def, usage string) {
	f.fs.StringVar(p, long, def, usage)
	f.alias(short, long, "string", usage)
}

func (f *flagSet) boolVar(p *bool, short, long string, def bool, usage string) {
	f.fs.BoolVar(p, long, def, usage)
	f.alias(short, long, "", usage)
}

func (f *flagSet) intVar(p *int, long string, def int, usage string) {
	f.fs.IntVar(p, long, def, usage)
	f.alias("", long, "int", usage)
}

func (f *flagSet) floatVar(p *float64, long string, def float64, usage string) {
	f.fs.Float64Var(p, long, def, usage)
	f.alias("", long, "number", usage)
}

func (f *flagSet) durationVar(p *time.Duration, long string, def time.Duration, usage string) {
	f.fs.DurationVar(p, long, def, usage)
	f.alias("", long, "duration", usage)
}

// usageError is bad command-line input: it exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// parse parses args with flags interspersed among positional arguments and
// returns the positional ones in order. Everything after "--" is positional.
func (f *flagSet) parse(args []string) ([]string, error) {
	args, err := f.expandAll(args)
	if err != nil {
		return nil, err
	}
	var pos []string
	for len(args) > 0 {
		if err := f.fs.Parse(args); err != nil {
			return nil, f.explain(err)
		}
		rest := f.fs.Args()
		if len(rest) == 0 {
			break
		}
		// Parse stops at a positional argument, or after "--", which it
		// drops: then everything left is positional.
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

// expandAll expands compact short flags up to "--", leaving flag values
// alone ("-l -x" keeps "-x" as the selector).
func (f *flagSet) expandAll(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		ex, err := f.expandShort(a)
		if err != nil {
			return nil, err
		}
		out = append(out, ex...)
		if fl := f.lookupArg(ex[len(ex)-1]); fl != nil && !isBool(fl) && len(ex) == 1 && i+1 < len(args) {
			i++
			out = append(out, args[i]) // the flag's value
		}
	}
	return out, nil
}

// lookupArg returns the flag an argument like "-n" or "--namespace" names
// without "=value", or nil.
func (f *flagSet) lookupArg(a string) *flag.Flag {
	if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
		return nil
	}
	return f.fs.Lookup(strings.TrimLeft(a, "-"))
}

// expandShort turns kubectl's compact short forms into what the flag
// package reads: "-owide" into "-o" "wide", "-Aw" into "-A" "-w". Anything
// that is a defined flag, a long flag or not a flag at all is unchanged.
func (f *flagSet) expandShort(arg string) ([]string, error) {
	if len(arg) < 3 || arg[0] != '-' || arg[1] == '-' || strings.Contains(arg, "=") {
		return []string{arg}, nil
	}
	name := arg[1:]
	if f.fs.Lookup(name) != nil {
		return []string{arg}, nil
	}
	first := f.fs.Lookup(name[:1])
	if first == nil {
		return nil, usagef("unknown flag -%s", name)
	}
	if !isBool(first) {
		return []string{"-" + name[:1], name[1:]}, nil
	}
	out := make([]string, 0, len(name))
	for _, c := range name {
		fl := f.fs.Lookup(string(c))
		if fl == nil || !isBool(fl) {
			return nil, usagef("unknown flag -%s (short flags may be combined only if they take no value)", name)
		}
		out = append(out, "-"+string(c))
	}
	return out, nil
}

func isBool(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// explain rewrites the flag package's errors as one line in kwatch's words.
func (f *flagSet) explain(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	if n, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		msg = "unknown flag " + dashes(n)
	} else if n, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = "flag " + dashes(n) + " needs a value"
	}
	return usagef("%s", msg)
}

// dashes shows a flag as the user most likely typed it: -n, --namespace.
func dashes(n string) string {
	n = strings.TrimLeft(n, "-")
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

// helpText lists the flags, one per line, aliases together.
func (f *flagSet) helpText() string {
	var b strings.Builder
	for _, s := range f.specs {
		name := "    --" + s.long
		if s.short != "" {
			name = "-" + s.short + ", --" + s.long
		}
		if s.arg != "" {
			name += " " + s.arg
		}
		def := ""
		if fl := f.fs.Lookup(s.long); fl != nil && fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" {
			def = " (default " + fl.DefValue + ")"
		}
		fmt.Fprintf(&b, "  %-36s %s%s\n", name, s.usage, def)
	}
	return b.String()
}
