// Package headergen writes the AppendExt and Decode methods of package
// protocol's pure-data headers from their struct tags, so that a header's
// keys are declared once (protocol doc.go, "Custom headers").
//
// A header is a struct every field of which carries an ext tag:
//
//	type PollingInfoRequestHeader struct {
//		ConsumerGroup string `ext:"consumerGroup"`
//		QueueID       int32  `ext:"queueId"`
//		AttemptID     string `ext:"attemptId,opt"`
//	}
//
// The tag is the extFields key, optionally followed by ",opt" or, on an
// int32 or int64 field, ",default=N": the value an absent key decodes to
// (Java's field initialiser; Decode reads r.optInt64(key).Or(N)). What
// each field type writes and reads, with the helpers of ext.go:
//
//	string           putStr            r.str       (",opt": putOptStr, omitted when empty)
//	bool             putBool           r.bool      (",opt": written only when true)
//	int32, int64     putInt32/putInt64 r.int32/r.int64
//	Optional[int32]  putOptInt32       r.optInt32  (likewise int64, bool; omitted when unset)
//	a named type     as its underlying type, converted (TopicFilterType: string)
//
// Decode reads the fields in declaration order, so the first bad field is
// the *FieldError. Its Header is the struct's name unless the struct's doc
// comment ends with the directive
//
//	//ext:header JavaClassName
//
// The directive
//
//	//ext:encoder
//
// also generates the ExtEncoder methods (AppendExtJSON, AppendExtBinary,
// through a writeExt that writes the keys in ascending byte order), for
// headers written on a hot path straight into the frame.
//
// A struct without ext tags is left alone (hand-written methods); a struct
// with some fields tagged and others not is an error, as are unknown field
// types and options.
package headergen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// OutputFile is the name of the generated file in the package directory.
const OutputFile = "zz_headers_gen.go"

// Directives in a header's doc comment: the FieldError header name, and
// whether to generate the ExtEncoder methods.
const (
	directive        = "//ext:header "
	encoderDirective = "//ext:encoder"
)

// kind is how a field is written and read.
type kind int

const (
	kindString kind = iota
	kindBool
	kindInt32
	kindInt64
	kindOptInt32
	kindOptInt64
	kindOptBool
)

type field struct {
	name string // Go field name
	key  string // extFields key
	opt  bool   // ",opt": omit the zero value
	def  string // ",default=N": decode an absent key as N, "" for none
	kind kind
	conv string // named type to convert to and from, "" for none
}

type header struct {
	name    string // Go type name
	errTag  string // FieldError.Header
	file    string
	fields  []field
	encoder bool // generate the ExtEncoder methods
}

// Generate parses the non-test Go files of the package in dir and returns
// the gofmt'ed source of OutputFile.
func Generate(dir string) ([]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("headergen: %w", err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	var names []string
	pkg := ""
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || n == OutputFile {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("headergen: %w", err)
		}
		if pkg == "" {
			pkg = f.Name.Name
		}
		files = append(files, f)
		names = append(names, n)
	}
	if pkg == "" {
		return nil, fmt.Errorf("headergen: no Go files in %s", dir)
	}
	underlying := namedTypes(files)
	var headers []header
	for i, f := range files {
		hs, err := fileHeaders(fset, f, names[i], underlying)
		if err != nil {
			return nil, err
		}
		headers = append(headers, hs...)
	}
	sort.SliceStable(headers, func(i, j int) bool { return headers[i].file < headers[j].file })
	return render(pkg, headers)
}

// namedTypes maps each non-struct defined type of the package (type X Y,
// Y an identifier) to its right-hand side.
func namedTypes(files []*ast.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if id, ok := ts.Type.(*ast.Ident); ok && !ts.Assign.IsValid() && ts.TypeParams == nil {
					out[ts.Name.Name] = id.Name
				}
			}
		}
	}
	return out
}

func fileHeaders(fset *token.FileSet, f *ast.File, file string, underlying map[string]string) ([]header, error) {
	var out []header
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok || ts.Assign.IsValid() {
				continue
			}
			doc := ts.Doc
			if doc == nil && len(g.Specs) == 1 {
				doc = g.Doc
			}
			h, ok, err := structHeader(fset, ts.Name.Name, st, doc, underlying)
			if err != nil {
				return nil, err
			}
			if ok {
				h.file = file
				out = append(out, h)
			}
		}
	}
	return out, nil
}

func structHeader(fset *token.FileSet, name string, st *ast.StructType, doc *ast.CommentGroup,
	underlying map[string]string) (header, bool, error) {
	h := header{name: name, errTag: name}
	tagged, untagged := 0, ""
	for _, fl := range st.Fields.List {
		key, ok := extTag(fl)
		if !ok {
			if len(fl.Names) > 0 {
				untagged = fl.Names[0].Name
			} else {
				untagged = "(embedded)"
			}
			continue
		}
		tagged++
		parts := strings.Split(key, ",")
		fd := field{key: parts[0]}
		pos := fset.Position(fl.Pos())
		if fd.key == "" || len(fl.Names) != 1 {
			return h, false, fmt.Errorf("headergen: %s: %s: one named field per ext tag, with a key", pos, name)
		}
		fd.name = fl.Names[0].Name
		for _, o := range parts[1:] {
			if d, ok := strings.CutPrefix(o, "default="); ok {
				if _, err := strconv.ParseInt(d, 10, 64); err != nil {
					return h, false, fmt.Errorf("headergen: %s: %s.%s: default %q is not an integer", pos, name, fd.name, d)
				}
				fd.def = d
				continue
			}
			if o != "opt" {
				return h, false, fmt.Errorf("headergen: %s: %s.%s: unknown ext option %q", pos, name, fd.name, o)
			}
			fd.opt = true
		}
		k, conv, err := fieldKind(fl.Type, underlying)
		if err != nil {
			return h, false, fmt.Errorf("headergen: %s: %s.%s: %w", pos, name, fd.name, err)
		}
		fd.kind, fd.conv = k, conv
		if fd.opt && k != kindString && k != kindBool {
			return h, false, fmt.Errorf("headergen: %s: %s.%s: opt applies to string and bool fields (use Optional[T])", pos, name, fd.name)
		}
		if fd.def != "" && ((k != kindInt32 && k != kindInt64) || conv != "") {
			return h, false, fmt.Errorf("headergen: %s: %s.%s: default applies to int32 and int64 fields", pos, name, fd.name)
		}
		h.fields = append(h.fields, fd)
	}
	if tagged == 0 {
		return h, false, nil
	}
	if untagged != "" {
		return h, false, fmt.Errorf("headergen: %s: %s.%s has no ext tag: tag every field of a generated header", fset.Position(st.Pos()), name, untagged)
	}
	if doc != nil {
		for _, c := range doc.List {
			if rest, ok := strings.CutPrefix(c.Text, directive); ok {
				h.errTag = strings.TrimSpace(rest)
			}
			if strings.TrimSpace(c.Text) == encoderDirective {
				h.encoder = true
			}
		}
	}
	return h, true, nil
}

func extTag(fl *ast.Field) (string, bool) {
	if fl.Tag == nil {
		return "", false
	}
	raw, err := strconv.Unquote(fl.Tag.Value)
	if err != nil {
		return "", false
	}
	return reflect.StructTag(raw).Lookup("ext")
}

// fieldKind resolves a field's type to a kind and, for a named type, the
// name to convert with.
func fieldKind(e ast.Expr, underlying map[string]string) (kind, string, error) {
	switch t := e.(type) {
	case *ast.Ident:
		name, conv := t.Name, ""
		for i := 0; i < 8; i++ { // a few levels of type X Y
			u, ok := underlying[name]
			if !ok {
				break
			}
			conv, name = t.Name, u
		}
		switch name {
		case "string":
			return kindString, conv, nil
		case "bool":
			return kindBool, conv, nil
		case "int32":
			return kindInt32, conv, nil
		case "int64":
			return kindInt64, conv, nil
		}
	case *ast.IndexExpr:
		if id, ok := t.X.(*ast.Ident); ok && id.Name == "Optional" {
			if arg, ok := t.Index.(*ast.Ident); ok {
				switch arg.Name {
				case "int32":
					return kindOptInt32, "", nil
				case "int64":
					return kindOptInt64, "", nil
				case "bool":
					return kindOptBool, "", nil
				}
			}
		}
	}
	return 0, "", fmt.Errorf("unsupported type %s (string, bool, int32, int64, Optional[int32|int64|bool] or a named basic type)", exprString(e))
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	_ = format.Node(&b, token.NewFileSet(), e)
	return b.String()
}

func render(pkg string, headers []header) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by headergen from the ext struct tags; DO NOT EDIT.\n")
	b.WriteString("// To change a header, edit its struct and run go generate ./internal/protocol.\n\n")
	fmt.Fprintf(&b, "package %s\n", pkg)
	file := ""
	for _, h := range headers {
		if h.file != file {
			file = h.file
			fmt.Fprintf(&b, "\n// %s\n", file)
		}
		fmt.Fprintf(&b, "\nfunc (h *%s) AppendExt(m map[string]string) {\n", h.name)
		for _, f := range h.fields {
			b.WriteString(putLine(f))
		}
		b.WriteString("}\n")
		fmt.Fprintf(&b, "\nfunc (h *%s) Decode(ext map[string]string) error {\n", h.name)
		fmt.Fprintf(&b, "r := extReader{header: %q, ext: ext}\n", h.errTag)
		for _, f := range h.fields {
			b.WriteString(readLine(f))
		}
		b.WriteString("return r.err\n}\n")
		if h.encoder {
			renderEncoder(&b, h)
		}
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("headergen: generated code does not parse: %w\n%s", err, b.Bytes())
	}
	return src, nil
}

var (
	putFunc  = map[kind]string{kindString: "putStr", kindBool: "putBool", kindInt32: "putInt32", kindInt64: "putInt64", kindOptInt32: "putOptInt32", kindOptInt64: "putOptInt64", kindOptBool: "putOptBool"}
	readFunc = map[kind]string{kindString: "str", kindBool: "bool", kindInt32: "int32", kindInt64: "int64", kindOptInt32: "optInt32", kindOptInt64: "optInt64", kindOptBool: "optBool"}
	basic    = map[kind]string{kindString: "string", kindBool: "bool", kindInt32: "int32", kindInt64: "int64"}
)

func putLine(f field) string {
	v := "h." + f.name
	if f.conv != "" {
		v = basic[f.kind] + "(" + v + ")"
	}
	switch {
	case f.opt && f.kind == kindString:
		return fmt.Sprintf("putOptStr(m, %q, %s)\n", f.key, v)
	case f.opt && f.kind == kindBool:
		return fmt.Sprintf("if %s {\nputBool(m, %q, true)\n}\n", v, f.key)
	}
	return fmt.Sprintf("%s(m, %q, %s)\n", putFunc[f.kind], f.key, v)
}

func readLine(f field) string {
	v := fmt.Sprintf("r.%s(%q)", readFunc[f.kind], f.key)
	if f.def != "" {
		v = fmt.Sprintf("r.%s(%q).Or(%s)", readFunc[map[kind]kind{kindInt32: kindOptInt32, kindInt64: kindOptInt64}[f.kind]], f.key, f.def)
	}
	if f.conv != "" {
		v = f.conv + "(" + v + ")"
	}
	return fmt.Sprintf("h.%s = %s\n", f.name, v)
}

func renderEncoder(b *bytes.Buffer, h header) {
	fmt.Fprintf(b, "\n// AppendExtJSON writes the header into a JSON header (ExtEncoder).\n")
	fmt.Fprintf(b, "func (h *%s) AppendExtJSON(dst []byte) []byte {\nw := NewExtWriter(dst, false)\nh.writeExt(&w)\nreturn w.Bytes()\n}\n", h.name)
	fmt.Fprintf(b, "\n// AppendExtBinary writes the header into a ROCKETMQ header (ExtEncoder).\n")
	fmt.Fprintf(b, "func (h *%s) AppendExtBinary(dst []byte) []byte {\nw := NewExtWriter(dst, true)\nh.writeExt(&w)\nreturn w.Bytes()\n}\n", h.name)
	fields := append([]field(nil), h.fields...)
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].key < fields[j].key })
	fmt.Fprintf(b, "\n// writeExt writes the fields in ascending byte order of their keys.\n")
	fmt.Fprintf(b, "func (h *%s) writeExt(w *ExtWriter) {\n", h.name)
	for _, f := range fields {
		b.WriteString(writeLine(f))
	}
	b.WriteString("}\n")
}

var writeFunc = map[kind]string{kindString: "String", kindBool: "Bool", kindInt32: "Int32", kindInt64: "Int64", kindOptInt32: "OptInt32", kindOptBool: "OptBool"}

func writeLine(f field) string {
	v := "h." + f.name
	if f.conv != "" {
		v = basic[f.kind] + "(" + v + ")"
	}
	switch {
	case f.opt && f.kind == kindString:
		return fmt.Sprintf("w.OptString(%q, %s)\n", f.key, v)
	case f.opt && f.kind == kindBool:
		return fmt.Sprintf("if %s {\nw.Bool(%q, true)\n}\n", v, f.key)
	case f.kind == kindOptInt64:
		return fmt.Sprintf("if %s.Set {\nw.Int64(%q, %s.Value)\n}\n", v, f.key, v)
	}
	return fmt.Sprintf("w.%s(%q, %s)\n", writeFunc[f.kind], f.key, v)
}
