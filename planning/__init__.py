"""Planning: the domain model (tower state), the rules, stability, looseness, kinematics and motion."""
