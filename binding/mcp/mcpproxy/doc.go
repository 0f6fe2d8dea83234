// Package mcpproxy is the mcp binding's proxy kind.
package mcpproxy
