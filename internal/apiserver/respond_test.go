package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestNegotiate: the Accept header's first supported media type decides (JSON, Table or
// PartialObjectMetadata of meta.k8s.io v1 or v1beta1, parameters in any order and spacing);
// only unsupported ones give a 406.
func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		header  string
		want    accept
		refused bool
	}{
		{header: ""},
		{header: "application/json"},
		{header: "*/*"},
		{header: "application/json;as=Table;v=v1;g=meta.k8s.io", want: accept{table: true, tableVer: "v1"}},
		{header: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", want: accept{table: true, tableVer: "v1"}},
		{header: "application/json; as=PartialObjectMetadataList; g=meta.k8s.io; v=v1beta1", want: accept{partial: true, tableVer: "v1beta1"}},
		{header: "application/json;as=Table;v=v2;g=meta.k8s.io, application/yaml"},
		{header: "application/json;as=Table;g=other.io;v=v1;as=PartialObjectMetadata;g=meta.k8s.io", want: accept{partial: true, tableVer: "v1"}},
		{header: "application/vnd.kubernetes.protobuf, application/json"},
		{header: "application/json;as=Table;v=v2;g=meta.k8s.io", refused: true},
		{header: "text/html", refused: true},
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
		r.Header.Set("Accept", tc.header)
		got, err := negotiate(r)
		if (err != nil) != tc.refused || got != tc.want {
			t.Errorf("Accept %q: %+v, %v; want %+v, refused %v", tc.header, got, err, tc.want, tc.refused)
		}
	}
}
