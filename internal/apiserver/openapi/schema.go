package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// refPrefix starts every reference to a component schema in an OpenAPI v3 document;
// refPrefixV2 starts every reference to a definition in the Swagger 2.0 document.
const (
	refPrefix   = "#/components/schemas/"
	refPrefixV2 = "#/definitions/"
)

// Extension keys written on schemas.
const (
	extGVK           = "x-kubernetes-group-version-kind"
	extPatchStrategy = "x-kubernetes-patch-strategy"
	extPatchMergeKey = "x-kubernetes-patch-merge-key"
	extListType      = "x-kubernetes-list-type"
	extListMapKeys   = "x-kubernetes-list-map-keys"
)

// Interfaces through which apimachinery types describe their own OpenAPI schema; the
// kube-openapi generator uses the same methods.
type (
	modelNamer      interface{ OpenAPIModelName() string }
	schemaTyper     interface{ OpenAPISchemaType() []string }
	schemaFormatter interface{ OpenAPISchemaFormat() string }
	v3OneOfTyper    interface{ OpenAPIV3OneOfTypes() []string }
	swaggerDocer    interface{ SwaggerDoc() map[string]string }
)

// definitions generates component schemas from Go types. Every named struct type becomes
// one component schema referenced with $ref; other types are inlined.
//
// The same walk writes either dialect kube-openapi publishes: OpenAPI v3 (references to
// #/components/schemas/, a reference with sibling keywords wrapped in allOf, the enforced
// zero-value defaults, oneOf for types with OpenAPIV3OneOfTypes) or, with v2 set, Swagger
// 2.0 (references to #/definitions/ with their siblings beside them, no enforced defaults,
// the single OpenAPISchemaType).
type definitions struct {
	v2      bool
	schemas map[string]map[string]any
	names   map[reflect.Type]string
	types   map[string]reflect.Type
}

func newDefinitions(v2 bool) *definitions {
	return &definitions{
		v2:      v2,
		schemas: map[string]map[string]any{},
		names:   map[reflect.Type]string{},
		types:   map[string]reflect.Type{},
	}
}

// prefix is the start of a reference to a schema in the dialect.
func (d *definitions) prefix() string {
	if d.v2 {
		return refPrefixV2
	}
	return refPrefix
}

// ref returns a reference to the named schema with extra keywords beside it.
func (d *definitions) ref(name string, extra map[string]any) map[string]any {
	return d.combine(map[string]any{"$ref": d.prefix() + name}, true, extra)
}

// define returns the component name of struct type t, generating its schema and every
// schema it references on first use. Recursive types terminate because the name is
// registered before the fields are walked.
func (d *definitions) define(t reflect.Type) (string, error) {
	if name, ok := d.names[t]; ok {
		return name, nil
	}
	name := modelName(t)
	if other, ok := d.types[name]; ok && other != t {
		return "", fmt.Errorf("openapi: Go types %v and %v both map to schema %q", other, t, name)
	}
	d.names[t] = name
	d.types[name] = t
	s := map[string]any{}
	d.schemas[name] = s
	if desc := swaggerDoc(t)[""]; desc != "" {
		s["description"] = desc
	}
	if types, ok := specialTypes(t); ok {
		// 1. Types describing themselves (Quantity, IntOrString, Time, JSON, ...).
		format := ""
		if f, ok := as[schemaFormatter](t); ok {
			format = f.OpenAPISchemaFormat()
		}
		if oneOf, ok := as[v3OneOfTyper](t); ok && !d.v2 && len(oneOf.OpenAPIV3OneOfTypes()) > 0 {
			alts := make([]any, 0, len(oneOf.OpenAPIV3OneOfTypes()))
			for _, typ := range oneOf.OpenAPIV3OneOfTypes() {
				alts = append(alts, map[string]any{"type": typ})
			}
			s["oneOf"] = alts
		} else if len(types) > 0 {
			s["type"] = types[0]
		}
		if format != "" && (s["type"] != nil || s["oneOf"] != nil) {
			s["format"] = format
		}
		return name, nil
	}
	// 2. Plain structs: an object with one property per JSON field.
	s["type"] = "object"
	props := map[string]any{}
	var required []string
	if err := d.collect(t, props, &required); err != nil {
		return "", err
	}
	if len(props) > 0 {
		s["properties"] = props
	}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		s["required"] = req
	}
	return name, nil
}

// collect adds the JSON fields of struct t, flattening inlined embedded structs, in the
// way encoding/json serializes them. Fields without omitempty are required, as
// kube-openapi infers when no +optional/+required marker is present; the fields whose
// markers say otherwise are in requiredOverride.
func (d *definitions) collect(t reflect.Type, props map[string]any, required *[]string) error {
	doc := swaggerDoc(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := d.collect(ft, props, required); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := props[name]; dup {
			continue
		}
		omitEmpty := hasOption(opts, "omitempty") || hasOption(opts, "omitzero")
		s, err := d.field(t, f, name, doc[name], omitEmpty)
		if err != nil {
			return fmt.Errorf("%v.%s: %w", t, f.Name, err)
		}
		props[name] = s
		isRequired := !omitEmpty
		if r, ok := requiredOverride(t, name); ok {
			isRequired = r
		}
		if isRequired {
			*required = append(*required, name)
		}
	}
	return nil
}

// field returns the schema of one struct field: its type, description, enforced default
// (v3 only) and the patch and list extensions of its struct tags. In v3 a reference with
// any sibling keyword is wrapped in allOf, as kube-openapi's v3 output does.
func (d *definitions) field(owner reflect.Type, f reflect.StructField, name, desc string, omitEmpty bool) (map[string]any, error) {
	base, isRef, err := d.inline(f.Type)
	if err != nil {
		return nil, err
	}
	extra := map[string]any{}
	if values, lines, ok := enumOf(f.Type); ok && !isRef {
		// 1. An +enum type: its values, and their paragraph in the description.
		base["enum"] = values
		desc = withEnumLines(desc, lines)
	}
	if desc != "" {
		extra["description"] = desc
	}
	// 2. The +default marker, else the default kube-openapi enforces (v3 only: the
	// Swagger 2.0 document has its defaults pruned, as kube-apiserver's).
	if def, ok := markerDefault(owner, f); ok && !d.v2 {
		extra["default"] = def
	} else if def := enforcedDefault(f.Type, omitEmpty); def != nil && !d.v2 {
		extra["default"] = def
	}
	strategy := f.Tag.Get("patchStrategy")
	mergeKey := f.Tag.Get("patchMergeKey")
	if strategy != "" {
		extra[extPatchStrategy] = strategy
	}
	if mergeKey != "" {
		extra[extPatchMergeKey] = mergeKey
	}
	if listType, keys, ok := listTypeOf(owner, name, f.Type, strategy, mergeKey); ok {
		extra[extListType] = listType
		if len(keys) > 0 {
			k := make([]any, len(keys))
			for i, key := range keys {
				k[i] = key
			}
			extra[extListMapKeys] = k
		}
	}
	return d.combine(base, isRef, extra), nil
}

// element returns the schema of an array item or map value: non-pointer values get the
// zero-value default kube-openapi enforces.
func (d *definitions) element(t reflect.Type) (map[string]any, error) {
	base, isRef, err := d.inline(t)
	if err != nil {
		return nil, err
	}
	if values, _, ok := enumOf(t); ok && !isRef {
		base["enum"] = values
	}
	extra := map[string]any{}
	if def := enforcedDefault(t, false); def != nil && !d.v2 {
		extra["default"] = def
	}
	return d.combine(base, isRef, extra), nil
}

// inline returns a fresh schema for a use of type t and whether it is a plain $ref.
func (d *definitions) inline(t reflect.Type) (map[string]any, bool, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Time]() {
		return map[string]any{"type": "string", "format": "date-time"}, false, nil
	}
	switch t.Kind() {
	case reflect.Struct:
		name, err := d.define(t)
		if err != nil {
			return nil, false, err
		}
		return map[string]any{"$ref": d.prefix() + name}, true, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}, false, nil
		}
		items, err := d.element(t.Elem())
		if err != nil {
			return nil, false, err
		}
		return map[string]any{"type": "array", "items": items}, false, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, false, fmt.Errorf("map key type %v is not a string", t.Key())
		}
		values, err := d.element(t.Elem())
		if err != nil {
			return nil, false, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, false, nil
	case reflect.Interface:
		return map[string]any{"type": "object"}, false, nil
	}
	typ, format, ok := scalar(t.Kind())
	if !ok {
		return nil, false, fmt.Errorf("type %v has no OpenAPI representation", t)
	}
	s := map[string]any{"type": typ}
	if format != "" {
		s["format"] = format
	}
	return s, false, nil
}

// combine adds extra keywords to a schema. In v3 a $ref with siblings is wrapped in
// allOf; Swagger 2.0 documents keep the siblings beside the $ref, as kube-apiserver's
// /openapi/v2 does.
func (d *definitions) combine(base map[string]any, isRef bool, extra map[string]any) map[string]any {
	if len(extra) == 0 {
		return base
	}
	if isRef && !d.v2 {
		base = map[string]any{"allOf": []any{base}}
	}
	for k, v := range extra {
		base[k] = v
	}
	return base
}

// scalar maps a Go kind to its OpenAPI type and format (kube-openapi's table).
func scalar(k reflect.Kind) (typ, format string, ok bool) {
	switch k {
	case reflect.String:
		return "string", "", true
	case reflect.Bool:
		return "boolean", "", true
	case reflect.Int, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint16:
		return "integer", "int32", true
	case reflect.Int8, reflect.Uint8:
		return "integer", "byte", true
	case reflect.Int64, reflect.Uint32, reflect.Uint64:
		return "integer", "int64", true
	case reflect.Float32:
		return "number", "float", true
	case reflect.Float64:
		return "number", "double", true
	}
	return "", "", false
}

// enforcedDefault is the default kube-openapi enforces for a non-pointer value: {} for
// structs, the zero value for scalars without omitempty, and none for pointers, slices,
// maps and types with custom JSON unmarshalling.
func enforcedDefault(t reflect.Type, omitEmpty bool) any {
	if customUnmarshal(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.NumField() == 1 && t.Field(0).Anonymous {
			return enforcedDefault(t.Field(0).Type, omitEmpty)
		}
		return map[string]any{}
	case reflect.String:
		if !omitEmpty {
			return ""
		}
	case reflect.Bool:
		if !omitEmpty {
			return false
		}
	default:
		if _, _, ok := scalar(t.Kind()); ok && !omitEmpty {
			return 0
		}
	}
	return nil
}

func customUnmarshal(t reflect.Type) bool {
	u := reflect.TypeFor[json.Unmarshaler]()
	return t.Implements(u) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(u))
}

// listTypeOf returns the x-kubernetes-list-type (and map keys) of a list field. Upstream
// takes them from +listType/+listMapKey comment markers, which reflection cannot see; they
// are derived from the strategic-merge tags (merge with a key → map keyed by it, merge
// without a key → set) except for the fields listed in listTypeOverride.
func listTypeOf(owner reflect.Type, name string, t reflect.Type, strategy, mergeKey string) (string, []string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if (t.Kind() != reflect.Slice && t.Kind() != reflect.Array) || t.Elem().Kind() == reflect.Uint8 {
		return "", nil, false
	}
	if listType, keys, ok := listTypeOverride(owner, name); ok {
		return listType, keys, true
	}
	if !hasOption(strategy, "merge") {
		return "", nil, false
	}
	if mergeKey != "" {
		return "map", []string{mergeKey}, true
	}
	return "set", nil, true
}

// listTypeOverride lists the upstream fields whose +listType/+listMapKey markers differ
// from what their patch tags imply (checked against the k8s.io/api sources).
func listTypeOverride(owner reflect.Type, name string) (string, []string, bool) {
	switch {
	case owner == reflect.TypeFor[corev1.Container]() && name == "ports",
		owner == reflect.TypeFor[corev1.EphemeralContainerCommon]() && name == "ports":
		return "map", []string{"containerPort", "protocol"}, true
	case owner == reflect.TypeFor[corev1.ServiceSpec]() && name == "ports":
		return "map", []string{"port", "protocol"}, true
	case owner == reflect.TypeFor[corev1.PodSpec]() && name == "topologySpreadConstraints":
		return "map", []string{"topologyKey", "whenUnsatisfiable"}, true
	case owner == reflect.TypeFor[corev1.PodStatus]() && name == "hostIPs",
		owner == reflect.TypeFor[batchv1.JobStatus]() && name == "conditions":
		return "atomic", nil, true
	case owner == reflect.TypeFor[corev1.VolumeHealthStatus]() && name == "healthConditions",
		owner == reflect.TypeFor[corev1.PodVolumeHealth]() && name == "healthConditions":
		return "map", []string{"status", "reason"}, true
	}
	return "", nil, false
}

// requiredOverride lists the fields of the served API types whose +optional or +required
// comment marker (which reflection cannot see, and which kube-openapi's generator obeys
// before the omitempty tag) contradicts their omitempty tag, checked against the sources
// of k8s.io/api and k8s.io/apiextensions-apiserver v0.37.0 (TestRequiredMatchesSourceMarkers
// re-checks every generated schema against the sources in the module cache). It matters
// beyond kubectl explain: kubectl validates the items of a kind: List on the client
// against /openapi/v2 and refuses objects missing a required field.
func requiredOverride(owner reflect.Type, name string) (required, ok bool) {
	type field struct {
		owner reflect.Type
		name  string
	}
	fields := func(t reflect.Type, names ...string) []field {
		out := make([]field, len(names))
		for i, n := range names {
			out[i] = field{t, n}
		}
		return out
	}
	var opt, req []field
	for _, fs := range [][]field{
		fields(reflect.TypeFor[corev1.TypedObjectReference](), "apiGroup"),
		fields(reflect.TypeFor[corev1.TypedLocalObjectReference](), "apiGroup"),
		fields(reflect.TypeFor[corev1.AzureFilePersistentVolumeSource](), "secretNamespace"),
		fields(reflect.TypeFor[corev1.ProjectedVolumeSource](), "sources"),
		fields(reflect.TypeFor[corev1.GRPCAction](), "service"),
		fields(reflect.TypeFor[corev1.NodeRuntimeHandler](), "name"),
		fields(reflect.TypeFor[corev1.ContainerImage](), "names"),
		fields(reflect.TypeFor[corev1.Event](), "reportingComponent", "reportingInstance"),
		fields(reflect.TypeFor[appsv1.StatefulSetOrdinals](), "start"),
		fields(reflect.TypeFor[appsv1.StatefulSetSpec](), "serviceName"),
		fields(reflect.TypeFor[appsv1.StatefulSetStatus](), "availableReplicas"),
		fields(reflect.TypeFor[appsv1.StatefulSetCondition](), "type", "status"),
		fields(reflect.TypeFor[appsv1.DeploymentCondition](), "type", "status"),
		fields(reflect.TypeFor[appsv1.DaemonSetCondition](), "type", "status"),
		fields(reflect.TypeFor[appsv1.ReplicaSetCondition](), "type", "status"),
		fields(reflect.TypeFor[appsv1.ControllerRevision](), "revision"),
		fields(reflect.TypeFor[batchv1.PodFailurePolicyOnPodConditionsPattern](), "status"),
		fields(reflect.TypeFor[schedulingv1.PriorityClass](), "value"),
		fields(reflect.TypeFor[rbacv1.Role](), "rules"),
		fields(reflect.TypeFor[rbacv1.ClusterRole](), "rules"),
		fields(reflect.TypeFor[rbacv1.RoleRef](), "apiGroup"),
		fields(reflect.TypeFor[storagev1.CSINodeDriver](), "topologyKeys"),
		fields(reflect.TypeFor[apiextensionsv1.CustomResourceDefinitionStatus](), "conditions", "acceptedNames", "storedVersions"),
	} {
		opt = append(opt, fs...)
	}
	for _, fs := range [][]field{
		fields(reflect.TypeFor[corev1.PodCertificateProjection](), "signerName", "keyType"),
		fields(reflect.TypeFor[corev1.ImageVolumeStatus](), "imageRef"),
		fields(reflect.TypeFor[corev1.ContainerRestartRule](), "action"),
		fields(reflect.TypeFor[corev1.ContainerRestartRuleOnExitCodes](), "operator"),
		fields(reflect.TypeFor[appsv1.StatefulSet](), "spec"),
		fields(reflect.TypeFor[appsv1.Deployment](), "spec"),
		fields(reflect.TypeFor[appsv1.DaemonSet](), "spec"),
		fields(reflect.TypeFor[appsv1.ReplicaSet](), "spec"),
		fields(reflect.TypeFor[batchv1.CronJob](), "spec"),
		fields(reflect.TypeFor[autoscalingv1.HorizontalPodAutoscaler](), "spec"),
	} {
		req = append(req, fs...)
	}
	for _, f := range opt {
		if f.owner == owner && f.name == name {
			return false, true
		}
	}
	for _, f := range req {
		if f.owner == owner && f.name == name {
			return true, true
		}
	}
	return false, false
}

// specialTypes reports whether t describes its own schema type via OpenAPISchemaType.
func specialTypes(t reflect.Type) ([]string, bool) {
	s, ok := as[schemaTyper](t)
	if !ok {
		return nil, false
	}
	return s.OpenAPISchemaType(), true
}

// as returns a value of type t (through a pointer, so pointer methods count) as I.
func as[I any](t reflect.Type) (I, bool) {
	v, ok := reflect.New(t).Interface().(I)
	return v, ok
}

func swaggerDoc(t reflect.Type) map[string]string {
	if s, ok := as[swaggerDocer](t); ok {
		return s.SwaggerDoc()
	}
	return nil
}

// modelName is the component schema name of t: OpenAPIModelName when the type declares it
// (k8s.io/api and apimachinery types do), else the reversed-domain package path and the
// type name ("k8s.io/api/core/v1".Pod → "io.k8s.api.core.v1.Pod").
func modelName(t reflect.Type) string {
	if n, ok := as[modelNamer](t); ok {
		if name := n.OpenAPIModelName(); name != "" {
			return name
		}
	}
	parts := strings.Split(t.PkgPath(), "/")
	domain := strings.Split(parts[0], ".")
	for i, j := 0, len(domain)-1; i < j; i, j = i+1, j-1 {
		domain[i], domain[j] = domain[j], domain[i]
	}
	return strings.Join(append(domain, append(parts[1:], t.Name())...), ".")
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
