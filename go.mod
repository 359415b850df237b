module github.com/exopower/exopower

go 1.26.8

require howett.net/plist v1.0.1
