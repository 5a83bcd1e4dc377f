# The txnscope exporter (or any txnscope command) in a container: a static binary on distroless
# (no shell, no package manager), run as its non-root user. deploy/kubernetes/ runs it;
# deploy/deploy_test.go checks the build below is the static one CI makes.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# -buildvcs=true: --version and txnscope_build_info name the commit (the build context must hold .git).
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=true -ldflags=-s -o /out/txnscope .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/txnscope /txnscope
USER 65532:65532
EXPOSE 10309
ENTRYPOINT ["/txnscope"]
CMD ["exporter", "--listen=0.0.0.0:10309"]
