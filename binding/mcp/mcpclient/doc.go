// Package mcpclient is the mcp binding's client kind.
package mcpclient
