package mcp

import "encoding/json"

// optionsSchema is the JSON Schema of an mcp binding's options, for all
// three kinds; each kind rejects the options that are not its own when it
// compiles them. prefix is the proxy's; server and timeout the client's;
// versions the server's and the client's; the rest the server's.
var optionsSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "origins": {"type": "array", "items": {"type": "string"}},
    "hosts": {"type": "array", "items": {"type": "string"}},
    "inactivity": {
      "type": "object",
      "additionalProperties": false,
      "properties": {"timeout": {"type": "string"}}
    },
    "sse": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "keepalive": {
          "type": "object",
          "additionalProperties": false,
          "properties": {"interval": {"type": "string"}}
        },
        "replay": {"type": "integer", "minimum": 0, "maximum": 4096}
      }
    },
    "get": {"type": "boolean"},
    "versions": {
      "type": "array",
      "minItems": 1,
      "items": {"type": "string"}
    },
    "limits": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "body": {"type": "integer", "minimum": 1}
      }
    },
    "prefix": {"enum": ["always", "conditional", "never"]},
    "server": {"type": "string", "pattern": "^http://"},
    "timeout": {"type": "string"},
    "sessions": {
      "type": "object",
      "additionalProperties": false,
      "properties": {"ids": {"enum": ["random", "sequential"]}}
    }
  }
}`)

// whenSchema is one item of a proxy route's when: the toolkit the route
// serves (its prefix) and which of that toolkit's tools, prompts and
// resources it exposes, each a glob or a list of globs.
var whenSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["toolkit"],
  "properties": {
    "toolkit": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
    "tool": {
      "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
      ]
    },
    "prompt": {
      "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
      ]
    },
    "resource": {
      "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
      ]
    }
  }
}`)
