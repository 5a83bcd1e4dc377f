package model

import "testing"

func TestParseFlinkID(t *testing.T) {
	tests := []struct {
		id   string
		want FlinkID
		ok   bool
	}{
		{"orders-enricher-v1-3-1742", FlinkID{"orders-enricher-v1", 3, 1742}, true},
		{"sink-0-0", FlinkID{"sink", 0, 0}, true},
		{"a-b-c-12-9", FlinkID{"a-b-c", 12, 9}, true},
		{"job--1-2", FlinkID{"job-", 1, 2}, true}, // prefix ending in a dash
		{"x-1-9223372036854775807", FlinkID{"x", 1, 9223372036854775807}, true},
		{"x-1-9223372036854775808", FlinkID{}, false}, // overflow
		{"x-+3-4", FlinkID{}, false},
		{"x-3-+4", FlinkID{}, false},
		{"x-3--4", FlinkID{}, false},
		{"x-3- 4", FlinkID{}, false},
		{"x-3-4a", FlinkID{}, false},
		{"x-three-4", FlinkID{}, false},
		{"x-3-", FlinkID{}, false},
		{"x--4", FlinkID{}, false},
		{"-3-4", FlinkID{}, false}, // no prefix
		{"3-4", FlinkID{}, false},
		{"plain", FlinkID{}, false},
		{"", FlinkID{}, false},
		{"-", FlinkID{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseFlinkID(tt.id)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseFlinkID(%q) = %+v,%v want %+v,%v", tt.id, got, ok, tt.want, tt.ok)
		}
	}
}
