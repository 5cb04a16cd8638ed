"""Motion: timed joint trajectories, tool poses, path search and the motion planner."""
