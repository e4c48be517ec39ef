package sim

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// quantityPattern is how the real server describes a valid quantity when it
// cannot parse one.
const quantityPattern = `^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`

// maxQuantityExponent bounds the decimal exponent of a quantity ("1e5"), so that a
// hostile body cannot make the server build an enormous number.
const maxQuantityExponent = 100

// quantitySuffixes maps each unit suffix to its multiplier as (base, exponent).
var quantitySuffixes = map[string][2]int64{
	"": {10, 0}, "n": {10, -9}, "u": {10, -6}, "m": {10, -3}, "k": {10, 3}, "M": {10, 6},
	"G": {10, 9}, "T": {10, 12}, "P": {10, 15}, "E": {10, 18},
	"Ki": {2, 10}, "Mi": {2, 20}, "Gi": {2, 30}, "Ti": {2, 40}, "Pi": {2, 50}, "Ei": {2, 60},
}

// parseQuantity parses a resource quantity ("100m", "1.5Gi", "2e3", "128974848")
// exactly: a sign, a decimal number, then a binary suffix (Ki..Ei), a decimal suffix
// (n, u, m, k, M..E) or a decimal exponent (e3, E-2).
func parseQuantity(s string) (*big.Rat, error) {
	bad := fmt.Errorf("quantities must match the regular expression '%s' (got %q)", quantityPattern, s)
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start, digits, dots := i, 0, 0
	for ; i < len(s) && (s[i] == '.' || (s[i] >= '0' && s[i] <= '9')); i++ {
		if s[i] == '.' {
			dots++
		} else {
			digits++
		}
	}
	if digits == 0 || dots > 1 {
		return nil, bad
	}
	num := s[start:i]
	if strings.HasPrefix(num, ".") {
		num = "0" + num
	}
	num = strings.TrimSuffix(num, ".")
	v, ok := new(big.Rat).SetString(num)
	if !ok {
		return nil, bad
	}
	if start > 0 && s[0] == '-' {
		v.Neg(v)
	}
	base, exp, err := quantityScale(s[i:])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", bad, err)
	}
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(base), big.NewInt(abs64(exp)), nil))
	if exp < 0 {
		return v.Quo(v, scale), nil
	}
	return v.Mul(v, scale), nil
}

// quantityScale returns the multiplier a suffix stands for, as base^exp.
func quantityScale(suffix string) (base, exp int64, err error) {
	if m, ok := quantitySuffixes[suffix]; ok {
		return m[0], m[1], nil
	}
	if len(suffix) < 2 || (suffix[0] != 'e' && suffix[0] != 'E') {
		return 0, 0, fmt.Errorf("unknown suffix %q", suffix)
	}
	n, perr := strconv.ParseInt(suffix[1:], 10, 64)
	if perr != nil {
		return 0, 0, fmt.Errorf("bad exponent %q", suffix)
	}
	if abs64(n) > maxQuantityExponent {
		return 0, 0, fmt.Errorf("exponent %d beyond the simulator's limit of %d", n, maxQuantityExponent)
	}
	return 10, n, nil
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
