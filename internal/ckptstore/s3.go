package ckptstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/txnscope/txnscope/internal/escape"
)

// s3Store is a key prefix of an S3 bucket. Credentials come from the AWS
// SDK's default chain: the environment, the shared config and credentials
// files and their profile (AWS_PROFILE), web identity (a Kubernetes
// service account's token), and the instance or container role.
type s3Store struct {
	client *s3.Client
	bucket string
	prefix string // the root's key prefix, without a trailing slash
}

func openS3(ctx context.Context, rest string, o S3Options) (Store, error) {
	bucket, prefix, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return nil, errors.New("names no bucket: want s3://BUCKET/PATH")
	}
	var opts []func(*config.LoadOptions) error
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	// The SDK's own log lines would land on the terminal the TUI draws.
	opts = append(opts, config.WithLogger(logging.Nop{}))
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("the AWS settings could not be read: %w", err)
	}
	if cfg.Region == "" {
		// S3-compatible stores mostly ignore it, and the SDK refuses to
		// sign without one.
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.UsePathStyle = o.PathStyle
		so.Logger = logging.Nop{}
		so.DisableLogOutputChecksumValidationSkipped = true
		// Retried by the SDK a few times; a verdict waits for no more.
		so.RetryMaxAttempts = 3
	})
	return &s3Store{client: client, bucket: bucket, prefix: strings.Trim(prefix, "/")}, nil
}

func (s *s3Store) key(p string) string { return join(s.prefix, p) }

func (s *s3Store) Root() string { return s.Show("") }

func (s *s3Store) Show(p string) string { return "s3://" + s.bucket + "/" + s.key(p) }

func (s *s3Store) List(ctx context.Context, dir string, max int) ([]Entry, error) {
	prefix := s.key(dir)
	if prefix != "" {
		prefix += "/"
	}
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix), Delimiter: aws.String("/")}
	var out []Entry
	p := s3.NewListObjectsV2Paginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.reason(err)
		}
		for _, c := range page.CommonPrefixes {
			if name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(c.Prefix), prefix), "/"); name != "" {
				out = append(out, Entry{Name: name, Dir: true, Size: -1})
			}
		}
		for _, o := range page.Contents {
			// A "directory marker" (Hadoop's S3A writes PATH/) is no file.
			if name := strings.TrimPrefix(aws.ToString(o.Key), prefix); name != "" && !strings.Contains(name, "/") {
				out = append(out, Entry{Name: name, Size: aws.ToInt64(o.Size)})
			}
		}
		if len(out) > max {
			return nil, fmt.Errorf("holds more than %d entries: not read", max)
		}
	}
	if len(out) == 0 && dir == "" {
		// An empty listing is also what a mistyped path gives: say whether
		// the bucket is there at all.
		if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.bucket)}); err != nil {
			if err = s.reason(err); errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("no bucket %s", escape.Quote(s.bucket))
			}
			return nil, err
		}
	}
	return out, nil
}

func (s *s3Store) Stat(ctx context.Context, p string) (Entry, error) {
	h, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(p))})
	if err != nil {
		return Entry{}, s.reason(err)
	}
	name := p[strings.LastIndexByte(p, '/')+1:]
	return Entry{Name: name, Size: aws.ToInt64(h.ContentLength)}, nil
}

func (s *s3Store) Read(ctx context.Context, p string, limit int64) ([]byte, error) {
	o, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(p))})
	if err != nil {
		return nil, s.reason(err)
	}
	defer o.Body.Close()
	if n := aws.ToInt64(o.ContentLength); n > limit {
		return nil, fmt.Errorf("larger than the %d MiB txnscope reads", limit>>20)
	}
	data, err := io.ReadAll(io.LimitReader(o.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than the %d MiB txnscope reads", limit>>20)
	}
	return data, nil
}

func (s *s3Store) Within(handle, dir string) (string, bool) {
	scheme, rest, ok := strings.Cut(handle, "://")
	if !ok {
		return "", false
	}
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3p":
	default:
		return "", false
	}
	bucket, key, _ := strings.Cut(rest, "/")
	base := s.key(dir) + "/"
	if bucket != s.bucket || !strings.HasPrefix(key, base) || strings.Contains("/"+key+"/", "/../") || strings.Contains("/"+key+"/", "/./") {
		return "", false
	}
	return join(dir, strings.TrimPrefix(key, base)), true
}

// reason is what went wrong, as one line: S3's error code and message,
// with a missing key as fs.ErrNotExist.
func (s *s3Store) reason(err error) error {
	var nk *types.NoSuchKey
	var nf *types.NotFound
	var nb *types.NoSuchBucket
	switch {
	case errors.As(err, &nk), errors.As(err, &nf):
		return fs.ErrNotExist
	case errors.As(err, &nb):
		return fmt.Errorf("no bucket %s", escape.Quote(s.bucket))
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		return fs.ErrNotExist
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %s", ae.ErrorCode(), ae.ErrorMessage())
	}
	return err
}
