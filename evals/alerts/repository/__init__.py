"""All SQL of alerts: alert state, evaluations, alerts, their events and notifications."""
