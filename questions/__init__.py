"""The question banks shipped with quiz (YAML files beside this module)."""
