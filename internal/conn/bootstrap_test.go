package conn

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitBootstrap(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{""}, nil},
		{[]string{" , ,"}, nil},
		{[]string{"a:1"}, []string{"a:1"}},
		{[]string{" a:1 , b:2,"}, []string{"a:1", "b:2"}},
		{[]string{"a:1,b:2", "c:3"}, []string{"a:1", "b:2", "c:3"}},
		// Left for ParseBootstrap (or the Kafka client) to refuse.
		{[]string{"a b:1"}, []string{"a b:1"}},
	} {
		if got := SplitBootstrap(c.in...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitBootstrap(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseBootstrap(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
		err  string
	}{
		{[]string{"localhost:9092"}, []string{"localhost:9092"}, ""},
		{[]string{"a:1, b:2 ,", "c:3"}, []string{"a:1", "b:2", "c:3"}, ""},
		{[]string{"\ta:1\n"}, []string{"a:1"}, ""},
		{nil, nil, "no bootstrap server given"},
		{[]string{" , "}, nil, "no bootstrap server given"},
		{[]string{"a:1,b :2"}, nil, `bad bootstrap server "b :2"`},
		{[]string{"a:1\nb:2"}, nil, `bad bootstrap server "a:1\nb:2"`},
		{[]string{"a:1\r\nb:2"}, nil, `bad bootstrap server "a:1\r\nb:2"`},
		{[]string{"a\tb:1, c d:2"}, nil, `bad bootstrap server "a\tb:1"`},
	} {
		got, err := ParseBootstrap(c.in...)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if !reflect.DeepEqual(got, c.want) || msg != c.err {
			t.Errorf("ParseBootstrap(%q) = %q, %q; want %q, %q", c.in, got, msg, c.want, c.err)
		}
	}
	var bad *AddressError
	if _, err := ParseBootstrap("x y:1"); !errors.As(err, &bad) || bad.Addr != "x y:1" {
		t.Errorf("a server with a space: %v, want an *AddressError naming it", err)
	}
	if _, err := ParseBootstrap(""); !errors.Is(err, ErrNoBootstrap) {
		t.Errorf("no server: %v, want ErrNoBootstrap", err)
	}
}
