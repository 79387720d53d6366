"""History: a machine's runs over time, the changes found in them, and their triage.

The flow: `series` reads a machine's runs into series (configuration x test, in time order), `detect`
finds where a series steps, `changes` keeps what was found with its triage, and `view` shapes a page or an
API answer from them."""
